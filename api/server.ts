/**
 * The Koa application, assembled in one place (`assembleApp`): the request pipeline of
 * api/http (metrics, compression, the error contract, rate limiting, body parsing), the
 * OpenAPI document and docs page, the operations endpoints, and one route per endpoint of
 * `ENDPOINTS` answered by its handler. Production (`createApp`) passes the handlers of
 * `api/handlers/` with the store, `/status` and the dashboard; the HTTP tests pass their own
 * handlers and probe routes to the same function, so they run on the app production runs.
 */
import { createServer, type Server } from 'node:http';
import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import type { Bus } from '../bus/types.ts';
import type { Config } from '../core/config.ts';
import { VaultstreamError } from '../core/errors.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import { registry } from '../core/metrics.ts';
import type { Store } from '../store/client.ts';
import { mountDashboard, prefersHtml } from './dashboard/index.ts';
import type { StatusBody } from './dashboard/status-html.ts';
import { statusPage } from './dashboard/status-html.ts';
import { type Changes, followVersions } from './events/changes.ts';
import { EventHub } from './events/hub.ts';
import { mountEvents } from './events/route.ts';
import { tokenHolderSnapshotsOf } from './handlers/holders.ts';
import { HANDLERS } from './handlers/index.ts';
import type { HandlerDeps } from './handlers/types.ts';
import { guardRequest, onClientError, PARSER_LIMIT_BYTES } from './http/edges.ts';
import { ENDPOINTS } from './http/endpoints.ts';
import { createHttpKit, type HttpKit } from './http/kit.ts';
import type { EndpointKey } from './http/responses.ts';
import type { Readiness } from './readiness.ts';
import type { SnapshotLink } from './snapshot-readiness.ts';
import { pipelineStatus } from './status.ts';

/** Handlers by endpoint key; each is given the request and `D` (production: `HandlerDeps`). */
export type EndpointHandlers<D> = Partial<Record<EndpointKey, (ctx: Context, deps: D) => Promise<void>>>;

/** What `assembleApp` builds an app from. */
export interface AppParts<D> {
  /** The `api` section of the configuration: cache, rate limit, body limit. */
  api: Config['api'];
  /** Changes whenever new data lands; keys the response cache. */
  dataVersion: () => number | string;
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number;
  log?: Logger;
  /** One per `ENDPOINTS` entry (production: `HANDLERS`); a missing one throws before the app is built. */
  handlers: EndpointHandlers<D>;
  /** What every handler is given, built once from the app's kit. */
  handlerDeps: (kit: HttpKit) => D;
  /** The `/readyz` check (api/readiness.ts): migrations, chain phases, stored watermark lag. */
  readiness?: Pick<Readiness, 'check'>;
  /** A fixed readiness answer (stand-in apps); used only when `readiness` is absent. */
  ready?: () => boolean;
  /** Routes beyond the endpoints and the operations ones (production: `/status` and the dashboard). */
  extraRoutes?: (router: Router, kit: HttpKit) => void;
  /** Replays cached answers before Koa (api/http/fast.ts), as production does; `false` keeps every request in Koa. */
  fast?: boolean;
  /** The `/metrics` text (default: this thread's registry; the API's own thread adds the main thread's). */
  metrics?: () => Promise<string>;
  /** The event stream served at `/v1/events` (api/events/hub.ts); none: not served. */
  events?: EventHub;
}

/** Builds the app: pipeline, docs, `/livez`, `/readyz`, `/metrics`, every endpoint, `/v1/events`, then `extraRoutes`. */
export function assembleApp<D>(parts: AppParts<D>): { app: Koa; kit: HttpKit } {
  const app = new Koa();
  const router = new Router();
  const log = parts.log ?? silentLogger;
  const kit = createHttpKit({ api: parts.api, version: parts.dataVersion, log, clock: parts.clock });
  const missing = ENDPOINTS.filter((e) => !parts.handlers[e.key]).map((e) => e.key);
  if (missing.length)
    throw new VaultstreamError(
      'INTERNAL',
      `no handler for ${missing.join(', ')}: every endpoint of ENDPOINTS is served`,
    );
  const deps = parts.handlerDeps(kit);
  for (const e of ENDPOINTS) {
    const handler = parts.handlers[e.key]!;
    router.register(`/v1${e.routerPath}`, [e.method], (ctx) => handler(ctx, deps));
  }
  for (const m of kit.middleware) app.use(m);
  kit.mountDocs(router);
  router.get('/livez', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (parts.readiness) {
      const report = await parts.readiness.check();
      ctx.status = report.status === 'ready' ? 200 : 503;
      ctx.body = report;
      return;
    }
    const ok = parts.ready?.() ?? false;
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ready' : 'not_ready', reasons: ok ? [] : ['not started'] };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await (parts.metrics ?? (() => registry.metrics()))();
  });
  if (parts.events) mountEvents(router, parts.events, parts.api);
  parts.extraRoutes?.(router, kit);
  app.use(router.routes()).use(router.allowedMethods());
  if (parts.fast !== false) kit.fast.install(app); // cached answers replayed before Koa (api/http/fast.ts)
  return { app, kit };
}

export interface ApiDeps {
  store: Store;
  config: Config;
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number;
  /** Changes whenever new data lands; keys the response cache. */
  dataVersion: () => number | string;
  bus?: { bus: Bus; groupId: string; topics: string[] };
  log?: Logger;
  /** Ingesters' progress (backfill per chain, Solana followers) for `/status`. */
  ingestProgress?: () => Record<string, unknown>;
  /** The mint-flow tracker, for on-demand lookups of unknown signatures. */
  mintFlow?: HandlerDeps['mintFlow'];
  /** A fixed readiness answer (stand-in apps); used only when `readiness` is absent. */
  ready?: () => boolean;
  /** The `/readyz` check (api/readiness.ts): migrations, chain phases, stored watermark lag. */
  readiness?: Pick<Readiness, 'check'>;
  /**
   * `/status`'s body (default: `pipelineStatus` of `store` and `bus`, plus `ingestProgress`): the
   * API's own thread asks the main thread, which holds the bus and the ingesters (api/thread/host.ts).
   */
  status?: () => Promise<StatusBody>;
  /** The `/metrics` text (default: the process registry's). */
  metrics?: () => Promise<string>;
  /** Where the API's snapshots report to readiness (api/snapshot-readiness.ts). */
  snapshots?: SnapshotLink;
  /**
   * Tells `listener` of each new data version and what it changed (api/events/changes.ts), for the
   * event stream; returns the stop. Default: `dataVersion` looked at every 20 ms, changes unknown.
   */
  versions?: (listener: (version: string, changes: Changes | null) => void) => () => void;
}

/** `/status`'s body: the pipeline's state and the ingesters' progress. */
export async function statusBody(
  deps: Pick<ApiDeps, 'store' | 'bus' | 'ingestProgress'>,
): Promise<StatusBody> {
  return { ...(await pipelineStatus(deps.store, deps.bus)), ingest: deps.ingestProgress?.() ?? null };
}

/** What an app holds beyond its requests (the token-holders snapshots), let go by `closeServer`. */
const closers = new WeakMap<Koa, () => Promise<void>>();
/** What never ends by itself and must before the server can close (the event streams). */
const enders = new WeakMap<Koa, () => void>();
/** The app each server listening through `listen` serves. */
const appOf = new WeakMap<Server, Koa>();

/** The production app: the handlers of api/handlers over `store`, plus `/status` and the dashboard. */
export function createApp(deps: ApiDeps): Koa {
  const log = deps.log ?? silentLogger;
  let close = async () => {};
  const events = deps.config.api.events.enabled
    ? new EventHub(deps.store, {
        settings: deps.config.api.events,
        version: String(deps.dataVersion()),
        clock: deps.clock,
        log,
      })
    : undefined;
  const stopFollowing = events
    ? (deps.versions ?? ((l) => followVersions(deps.dataVersion, undefined, l)))((v, c) => events.push(v, c))
    : () => {};
  const app = assembleApp<HandlerDeps>({
    api: deps.config.api,
    dataVersion: deps.dataVersion,
    clock: deps.clock,
    log,
    readiness: deps.readiness,
    ready: deps.ready,
    metrics: deps.metrics,
    events,
    handlers: HANDLERS,
    handlerDeps: (kit) => {
      const handlerDeps: HandlerDeps = {
        store: deps.store,
        config: deps.config,
        kit,
        // Notes its reads: a cache key chosen after one (a time-relative default) is replayed within its second only.
        clock: kit.fast.clock,
        log,
        mintFlow: deps.mintFlow,
        dataVersion: deps.dataVersion,
        readiness: deps.readiness,
        snapshots: deps.snapshots,
      };
      const snapshots = tokenHolderSnapshotsOf(handlerDeps); // builds the first GET /token-holders snapshot now
      close = () => snapshots.close();
      return handlerDeps;
    },
    extraRoutes: (router) => {
      router.get('/status', async (ctx) => {
        const body = await (deps.status ?? (() => statusBody(deps)))();
        ctx.vary('Accept');
        if (prefersHtml(ctx)) {
          ctx.type = 'text/html; charset=utf-8';
          ctx.body = statusPage(body);
          return;
        }
        ctx.body = body;
      });
      mountDashboard(router, { store: deps.store });
    },
  }).app;
  closers.set(app, () => close());
  enders.set(app, () => {
    stopFollowing();
    events?.close();
  });
  return app;
}

/**
 * Serves `app` on host:port with the server-level edges of the error contract
 * (api/http/edges.ts): a long URL, large headers and malformed requests get JSON errors.
 */
export function listen(app: Koa, host: string, port: number): Promise<Server> {
  const handle = app.callback();
  const server = createServer({ maxHeaderSize: PARSER_LIMIT_BYTES }, (req, res) => {
    if (!guardRequest(req, res)) void handle(req, res);
  });
  server.on('clientError', onClientError);
  appOf.set(server, app);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/**
 * Stops serving (the event streams end, the requests in flight finish), then lets go of what the
 * app holds: a snapshot being built finishes before the store closes, and its files are removed.
 */
export async function closeServer(server: Server): Promise<void> {
  const app = appOf.get(server);
  if (app) enders.get(app)?.();
  await new Promise<void>((r) => server.close(() => r()));
  if (app) await closers.get(app)?.();
}
