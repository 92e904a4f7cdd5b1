/**
 * The API's request pipeline in one place: metrics, compression, the error
 * contract, rate limiting and the JSON body parser, in that order, plus the
 * response cache and the OpenAPI/docs routes. The server mounts `middleware`
 * before its routes and answers reads with `respond`.
 */
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Config } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import { ResponseCache } from './cache.ts';
import type { LoadResult } from './cache-entry.ts';
import { type RespondOptions, respondCached } from './cache-respond.ts';
import { mountDocsRoutes } from './docs.ts';
import { acceptableEncoding, compression } from './encoding.ts';
import { ApiError, errorHandler } from './errors.ts';
import { createFastPath, type FastPath } from './fast.ts';
import { recordCacheLoad, recordCacheLookup, requestMetrics } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { clientKey, createRateLimiter } from './ratelimit.ts';

export interface HttpKitOptions {
  /** The `api` section of the configuration. */
  api: Config['api'];
  /** The current data version (changes when new data lands); part of every cache key. */
  version: () => number | string;
  log?: Logger;
  clock?: () => number;
  /** Requests exempt from rate limiting; default: everything outside `/v1/`. */
  skipRateLimit?: (ctx: Context) => boolean;
}

export interface HttpKit {
  cache: ResponseCache;
  /** To `app.use` in this order, before the routers. */
  middleware: Middleware[];
  /** Answers a read from the cache (see `respondCached`), with the configured Cache-Control. */
  respond(ctx: Context, load: () => Promise<LoadResult>, opts?: Pick<RespondOptions, 'key'>): Promise<void>;
  /** Adds `GET /v1/openapi.json`, `GET /docs` and its assets to `router` (mounted at the root). */
  mountDocs(router: Router): void;
  /**
   * Cached answers replayed before Koa (api/http/fast.ts): `fast.install(app)` once the app is
   * built, and `fast.clock` as the handlers' clock (a handler reading another clock before
   * choosing its key must not be installed). Without `install` every request goes through Koa.
   */
  fast: FastPath;
}

/** Builds the pipeline from the `api` configuration. */
export function createHttpKit(opts: HttpKitOptions): HttpKit {
  const { cache: c, rateLimit: rl } = opts.api;
  const clock = opts.clock ?? Date.now;
  const limiter = createRateLimiter({
    ...rl,
    clock,
    skip: opts.skipRateLimit ?? ((ctx) => !ctx.path.startsWith('/v1/')),
  });
  const fast = createFastPath({
    cache: () => cache,
    version: opts.version,
    clock,
    limiter,
    enabled: c.enabled && c.maxBytes > 0,
  });
  const cache: ResponseCache = new ResponseCache({
    version: opts.version,
    maxBytes: c.enabled ? c.maxBytes : 0,
    ttlMs: c.ttlSeconds * 1000,
    // As clients are told (Cache-Control stale-while-revalidate), the server serves an expired
    // answer that long while one reload replaces it.
    staleMs: c.staleWhileRevalidateSeconds * 1000,
    // While a new data version's answer is computed, the previous one is served this long at most.
    maxStaleMs: c.maxStaleMs,
    clock: opts.clock,
    onLookup: recordCacheLookup,
    onLoad: recordCacheLoad,
    onRemove: (entry) => fast.forget(entry),
  });
  const respondOpts = {
    maxAgeSeconds: c.maxAgeSeconds,
    staleWhileRevalidateSeconds: c.staleWhileRevalidateSeconds,
    compressMinBytes: c.compressMinBytes,
    served: fast.served,
  };
  // The error handler runs outside compression, so a negotiation failure there is JSON too.
  // First: the fast path records an answer once every middleware has set its headers.
  const middleware: Middleware[] = [
    async (ctx, next) => {
      await next();
      fast.record(ctx);
    },
    requestMetrics(),
    errorHandler({ log: opts.log }),
    acceptableEncoding(),
    compression(c.compressMinBytes),
    limiter.middleware,
    bodyParser({ enableTypes: ['json'], jsonLimit: opts.api.bodyLimitBytes, jsonStrict: true }) as Middleware,
    // Last: the router runs the handler synchronously from here, so the fast path sees its clock reads.
    (ctx, next) => {
      fast.begin(ctx);
      return next();
    },
  ];
  let doc: Record<string, unknown> | undefined;
  // Uncached work per client: at most `maxUncachedPerClient` loads a client started run at once.
  const loading = new Map<string, number>();
  const admit = (ctx: Context) => () => {
    const client = clientKey(ctx, rl.header);
    const n = loading.get(client) ?? 0;
    if (n >= c.maxUncachedPerClient)
      throw new ApiError(
        'RATE_LIMITED',
        `too many uncached requests at once from this client (at most ${c.maxUncachedPerClient}); retry after 1 s`,
        { headers: { 'Retry-After': '1' } },
      );
    loading.set(client, n + 1);
    return () => {
      const left = (loading.get(client) ?? 1) - 1;
      if (left > 0) loading.set(client, left);
      else loading.delete(client);
    };
  };
  return {
    cache,
    middleware,
    fast,
    respond: (ctx, load, o) => respondCached(ctx, cache, load, { ...respondOpts, admit: admit(ctx), ...o }),
    mountDocs(router) {
      doc ??= buildOpenApiDocument();
      mountDocsRoutes(router, doc);
    },
  };
}
