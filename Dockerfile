# vaultstream: one image for every role; the command picks the role.
#   docker build -t vaultstream .
#   docker run --rm vaultstream            # `start`: every role in one process (embedded chDB, in-process bus);
#                                          # no devnet in the image: give the chains' RPC URLs (see README)
#   docker run --rm vaultstream streams    # one role; see docker-compose.yml for the env each role needs
#   docker build --target devnet -t vaultstream:devnet .   # the same plus the devnet's anvil and solc
#                                          # (docker-compose.yml's ingest role runs the devnet with it)
# The image runs the compiled CLI (dist/, scripts/build.mjs: esbuild, npm packages external) built in
# the `build` stage; VAULTSTREAM_RUNTIME=compiled makes bin/vaultstream.mjs refuse to fall back to tsx.
# tsx stays a runtime dependency: the batch encoder's worker threads (streams/encode-worker.mjs) use it.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- deps: production node_modules only ----------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: nothing here needs an install script (chdb's is a no-op, its library ships in
# the @chdb/lib-* platform package; esbuild's only checks the @esbuild/* platform package npm
# already installed), and it keeps the build the same under npm 10 (this image) and npm 11.
# The devnet's tools are not production dependencies: solc is a dev dependency (omitted here) and
# anvil's platform package an optional one (npm skips it off linux-x64); the image has no devnet
# (devnet.enabled is off below), so anvil is removed rather than shipped.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && rm -rf node_modules/@foundry-rs \
    && npm cache clean --force

# ---- build: the compiled CLI (needs the dev dependencies: esbuild) ---------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN node scripts/build.mjs

# ---- runtime -------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    UV_THREADPOOL_SIZE=16 \
    VAULTSTREAM_DATA_DIR=/var/lib/vaultstream \
    API_HOST=0.0.0.0 \
    API_PORT=3000 \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    VAULTSTREAM_RUNTIME=compiled \
    VAULTSTREAM__devnet__enabled=false
WORKDIR /app

# Non-root: the image's `node` user (uid 1000). Source and dependencies stay root-owned and
# read-only to it; only the data directory (embedded chDB, in-process bus log) is writable.
RUN mkdir -p /var/lib/vaultstream && chown node:node /var/lib/vaultstream

COPY --from=deps /app/node_modules ./node_modules
COPY . .
COPY --from=build /app/dist ./dist

USER node
EXPOSE 3000
ENTRYPOINT ["node", "--max-semi-space-size=16", "bin/vaultstream.mjs"]
CMD ["start"]

# ---- devnet: the runtime plus the devnet's tools (anvil, solc), for local stacks and demos -------
# Not the default image: production roles never need them. docker-compose.yml's `ingest` builds
# this target so the stack has chains to follow without outside RPC URLs.
FROM runtime AS devnet
# The build stage's node_modules: every dependency incl. the dev and optional ones (solc, anvil).
COPY --from=build /app/node_modules ./node_modules
ENV VAULTSTREAM__devnet__enabled=true

# ---- the default target (`docker build .` builds the last stage): the production runtime -----
FROM runtime AS production
