/**
 * Prometheus metrics of the API, on the process registry of core/metrics.ts:
 * request latency per route template (never the raw path, so slugs do not
 * explode the label set), cache lookups, and store query time.
 */
import type { Middleware } from 'koa';
import { Counter, Histogram } from 'prom-client';
import { registry } from '../../core/metrics.ts';
import { type LookupResult, routeOf } from './cache.ts';

export const httpRequestSeconds = new Histogram({
  name: 'vaultstream_http_request_duration_seconds',
  help: 'Time from request to the end of the response, per route template',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const cacheLookups = new Counter({
  name: 'vaultstream_api_cache_lookups_total',
  help: 'Response cache lookups: hit, miss (the loader ran) or coalesced (joined a running load)',
  labelNames: ['route', 'result'] as const,
  registers: [registry],
});

export const storeQuerySeconds = new Histogram({
  name: 'vaultstream_store_query_duration_seconds',
  help: 'Time of one store query issued by the API, per query name',
  labelNames: ['query'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/**
 * Times every request until its response is finished or aborted (streamed
 * bodies included), labelled by method, route template and status. Mount it
 * first so it sees the final status.
 */
export function requestMetrics(): Middleware {
  return async (ctx, next) => {
    const end = httpRequestSeconds.startTimer();
    ctx.res.once('close', () => end({ method: ctx.method, route: routeOf(ctx), status: String(ctx.status) }));
    await next();
  };
}

/** Counts a cache lookup; pass it as `ResponseCache`'s `onLookup`. */
export function recordCacheLookup(route: string, result: LookupResult): void {
  cacheLookups.inc({ route, result });
}

/** Runs one store query and records its duration under `name` (failures included). */
export async function timeStoreQuery<T>(name: string, run: () => Promise<T>): Promise<T> {
  const end = storeQuerySeconds.startTimer({ query: name });
  try {
    return await run();
  } finally {
    end();
  }
}
