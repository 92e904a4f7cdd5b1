/**
 * Prometheus metrics of the API, on the process registry of core/metrics.ts:
 * request latency per route template (never the raw path, so slugs do not
 * explode the label set), cache lookups, and store query time.
 *
 * The fast path (api/http/fast.ts) answers tens of thousands of requests a second; a
 * prom-client `observe`/`inc` with labels costs about a microsecond each (label object,
 * validation, hash string), as much as the rest of its answer. It counts into batches
 * instead (`fastRequestSeries`, `fastCacheHits`: plain numbers, a bucket index), which are
 * added to the same metrics whenever they are read (a scrape, `get()`), so what is exposed
 * is exact and the same as if each request had been observed.
 */
import type { Middleware } from 'koa';
import { Counter, Histogram } from 'prom-client';
import { registry } from '../../core/metrics.ts';
import type { LookupResult } from './cache.ts';
import { routeOf } from './cache-respond.ts';

const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequestSeconds = new Histogram({
  name: 'vaultstream_http_request_duration_seconds',
  help: 'Time from request to the end of the response, per route template',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: REQUEST_BUCKETS,
  registers: [registry],
  collect: () => drainRequestSeries(),
});

export const cacheLookups = new Counter({
  name: 'vaultstream_api_cache_lookups_total',
  help: 'Response cache lookups: hit, miss (the loader ran), coalesced (joined a running load), stale (past its ttl, within its grace) or previous (an earlier data version while the new one loads)',
  labelNames: ['route', 'result'] as const,
  registers: [registry],
  collect: () => drainCacheHits(),
});

export const cacheLoads = new Counter({
  name: 'vaultstream_api_cache_loads_total',
  help: 'Answers computed for the response cache: for a waiting request (foreground) or while an earlier answer is served (background)',
  labelNames: ['route', 'mode'] as const,
  registers: [registry],
});

/** Observations of one `httpRequestSeconds` series not yet added to it. */
export class RequestSeries {
  /** Per bucket of REQUEST_BUCKETS (not cumulative); the last one is +Inf. */
  readonly counts = new Float64Array(REQUEST_BUCKETS.length + 1);
  sum = 0;
  count = 0;
  constructor(readonly labels: { method: string; route: string; status: string }) {}

  /** One request of `seconds`. */
  observe(seconds: number): void {
    let i = 0;
    while (i < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[i]) i++;
    this.counts[i]++;
    this.sum += seconds;
    this.count++;
  }
}

const requestSeries = new Map<string, RequestSeries>();

/** The batch of the (method, route, status) series; the same object for the same labels. */
export function fastRequestSeries(method: string, route: string, status: string): RequestSeries {
  const key = `${method}\u0000${route}\u0000${status}`;
  const s = requestSeries.get(key) ?? new RequestSeries({ method, route, status });
  requestSeries.set(key, s);
  return s;
}

/** One series as prom-client 15 holds it (`hashMap` values); it has no public bulk add. */
interface HeldSeries {
  labels: Record<string, string | number>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

function heldSeries(labels: Record<string, string>): HeldSeries {
  const h = httpRequestSeconds as unknown as { hashMap: Record<string, HeldSeries> };
  const names = Object.keys(labels);
  const same = (s: HeldSeries) =>
    Object.keys(s.labels).length === names.length && names.every((n) => s.labels[n] === labels[n]);
  const found = Object.values(h.hashMap).find(same);
  if (found) return found;
  httpRequestSeconds.zero(labels); // prom-client's own empty series for these labels
  const made = Object.values(h.hashMap).find(same);
  if (!made) throw new Error('prom-client histogram internals changed: no series after zero()');
  return made;
}

function drainRequestSeries(): void {
  for (const s of requestSeries.values()) {
    if (s.count === 0) continue;
    const held = heldSeries(s.labels);
    for (let i = 0; i < REQUEST_BUCKETS.length; i++) held.bucketValues[REQUEST_BUCKETS[i]] += s.counts[i];
    held.sum += s.sum;
    held.count += s.count;
    s.counts.fill(0);
    s.sum = 0;
    s.count = 0;
  }
}

/** Cache hits (or `previous` answers) per route not yet added to `cacheLookups`. */
export class HitCount {
  n = 0;
  constructor(
    readonly route: string,
    readonly result: 'hit' | 'previous' = 'hit',
  ) {}
}

const cacheHits = new Map<string, HitCount>();

/** The batch of cache hits (or `previous` answers) of `route`; the same object for the same route and result. */
export function fastCacheHits(route: string, result: 'hit' | 'previous' = 'hit'): HitCount {
  const key = `${result}\u0000${route}`;
  const h = cacheHits.get(key) ?? new HitCount(route, result);
  cacheHits.set(key, h);
  return h;
}

function drainCacheHits(): void {
  for (const h of cacheHits.values()) {
    if (h.n === 0) continue;
    cacheLookups.inc({ route: h.route, result: h.result }, h.n);
    h.n = 0;
  }
}

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

/** Counts a computed answer; pass it as `ResponseCache`'s `onLoad`. */
export function recordCacheLoad(route: string, background: boolean): void {
  cacheLoads.inc({ route, mode: background ? 'background' : 'foreground' });
}

/** Counts a cache lookup; pass it as `ResponseCache`'s `onLookup`. */
export function recordCacheLookup(route: string, result: LookupResult): void {
  cacheLookups.inc({ route, result });
}
