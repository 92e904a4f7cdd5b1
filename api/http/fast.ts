/**
 * The fast path of cached answers: a 200 that `respondCached` sent for a GET or HEAD is
 * remembered under (method, raw URL, raw `Accept-Encoding`) with the exact status line
 * headers Koa sent; the next identical request is answered from that record before Koa
 * builds a context: one map lookup, the checks below, one write. Anything else (a miss, a
 * new data version, an evicted or expired entry, a refused rate limit, another method)
 * falls through to the full Koa pipeline, which records again.
 *
 * A record is valid only while
 * - the data version is the one it was made under and the cache still holds its entry
 *   (fresh: the entry's TTL), so the cache's semantics (per data version, LRU, TTL) stand;
 *   or, once the version has moved on, while the cache would serve that entry as the key's
 *   `previous` answer and start nothing (within the staleness bound, the new version's answer
 *   already being computed: `ResponseCache.servesPrevious`). The request that starts that
 *   computation, and every one past the bound, goes through Koa. So while data lands (a new
 *   version every batch) the answers served meanwhile cost what a hit costs, not a pass
 *   through Koa each;
 * - the request's second is the one it was made in, when the handler read the clock
 *   before choosing the cache key (time-relative defaults such as `endDate = today`):
 *   such a URL goes through Koa once a second, every other request takes the fast path;
 * - it was made for a request whose handler reached `respondCached` without giving way
 *   to another request (so the clock reads seen are its own).
 * The rate limit (same buckets, same headers), `If-None-Match`/304 (weak comparison, any
 * variant) and the metrics (request histogram, cache hit counter) are applied here as in
 * Koa. Records are bounded in number and dropped when their cache entry leaves the cache.
 *
 * What a replay costs is kept to what a bare `node:http` handler pays plus a few lookups:
 * records are found by two map lookups on strings Node already made (the raw URL, then the
 * raw `Accept-Encoding`) instead of a key built per request; the version string is made
 * once per version; the metrics are counted into batches (api/http/metrics.ts) that are
 * added to the histogram and counter when they are read; the duration is observed right
 * after `end` when the response is already handed to the socket (else on 'close', as Koa's
 * path does), so no listener is added per request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Context } from 'koa';
import type { ResponseCache } from './cache.ts';
import type { CacheEntry } from './cache-entry.ts';
import type { ServedAnswer } from './cache-respond.ts';
import { etagMatches } from './encoding.ts';
import { fastCacheHits, fastRequestSeries, type HitCount, type RequestSeries } from './metrics.ts';
import { RATE_LIMIT_SKIPPED, type RateLimiter } from './ratelimit.ts';

/** Most records held (the oldest made goes first). */
const MAX_RECORDS = 10_000;
/** Headers per request, never replayed. */
const PER_REQUEST = new Set([
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
]);
/** Headers a 304 does not carry (Koa drops them with the body). */
const BODY_ONLY = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding']);
const NO_HEADERS: readonly string[] = Object.freeze([]);

type Method = 'GET' | 'HEAD';

interface FastRecord {
  key: string;
  method: Method;
  url: string;
  /** The raw `Accept-Encoding` ('' when absent). */
  acceptEncoding: string;
  version: string;
  full: string;
  entry: CacheEntry;
  route: string;
  body: Buffer;
  /** The ETag sent (the entry's, or its `?meta=1` variant's): what `If-None-Match` is compared with. */
  etag: string;
  /** Flat name/value lists. */
  headers200: string[];
  headers304: string[];
  /** The request's second when the cache key depended on the clock. */
  second?: number;
  /** The rate limiter applies (its `skip` did not exempt the URL). */
  limited: boolean;
  series200: RequestSeries;
  series304: RequestSeries;
  hits: HitCount;
  /** Its answers replayed as an earlier version's (`previous`). */
  previousHits: HitCount;
}

interface Pending {
  answer: ServedAnswer;
  /** The second of the handler's clock reads before it chose the key (undefined: none). */
  second?: number;
}

const PENDING = Symbol('fastPathPending');

export interface FastPath {
  /** The clock to give handlers: it notes reads, so a time-dependent cache key is recognized. */
  clock: () => number;
  /** Marks the start of a handler (before it parses its inputs). */
  begin(ctx: Context): void;
  /** `respondCached`'s `served` hook: notes the answer when it may be replayed. */
  served(ctx: Context, answer: ServedAnswer): void;
  /** After the whole pipeline (outermost middleware): stores the noted answer with its final headers. */
  record(ctx: Context): void;
  /** Answers `req` from a record; false when Koa must. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
  /** Puts `serve` in front of `app`'s request handler (nothing when `app.proxy`: the client is then Koa's to find). */
  install(app: Koa): void;
  /** Records held now. */
  readonly size: number;
  /** Requests answered by `serve` so far. */
  readonly answered: number;
  /** Drops the records of `entry` (the cache's `onRemove`). */
  forget(entry: CacheEntry): void;
}

export function createFastPath(opts: {
  cache: () => ResponseCache;
  version: () => number | string;
  clock: () => number;
  limiter: RateLimiter;
  enabled: boolean;
}): FastPath {
  // Every record by its flat key (insertion order: the oldest made goes first when full), and
  // the same records by method, raw URL and raw Accept-Encoding for `serve`.
  const records = new Map<string, FastRecord>();
  const index: Record<Method, Map<string, Map<string, FastRecord>>> = { GET: new Map(), HEAD: new Map() };
  const byEntry = new WeakMap<CacheEntry, Set<string>>();
  let current: Context | undefined;
  // The seconds of the clock reads since `begin` (NaN: none); replayable when they agree.
  let firstSecond = Number.NaN;
  let lastSecond = Number.NaN;
  let answered = 0;
  // The current data version as a string, made once per version.
  let seenVersion: unknown;
  let seenVersionString = '';
  const versionString = () => {
    const v = opts.version();
    if (v !== seenVersion) {
      seenVersion = v;
      seenVersionString = String(v);
    }
    return seenVersionString;
  };
  const unindex = (r: FastRecord) => {
    const byAe = index[r.method].get(r.url);
    if (byAe?.get(r.acceptEncoding) !== r) return;
    byAe.delete(r.acceptEncoding);
    if (byAe.size === 0) index[r.method].delete(r.url);
  };
  const drop = (r: FastRecord) => {
    records.delete(r.key);
    unindex(r);
    byEntry.get(r.entry)?.delete(r.key);
  };
  const serve = (req: IncomingMessage, res: ServerResponse): boolean => {
    const method = req.method;
    const byUrl = method === 'GET' ? index.GET : method === 'HEAD' ? index.HEAD : undefined;
    if (byUrl === undefined) return false;
    const rec = byUrl.get(req.url as string)?.get(req.headers['accept-encoding'] ?? '');
    if (rec === undefined) return false;
    return reply(rec, req, res);
  };
  const keyOf = (method: string, url: string, ae: string) => `${method} ${url}\u0000${ae}`;

  function reply(rec: FastRecord, req: IncomingMessage, res: ServerResponse): boolean {
    const start = performance.now();
    const now = opts.clock();
    if (rec.second !== undefined && Math.floor(now / 1000) !== rec.second) {
      drop(rec);
      return false;
    }
    const cache = opts.cache();
    const previous = versionString() !== rec.version;
    if (previous) {
      // Kept otherwise: Koa may serve it as `previous` when it starts the new version's load.
      if (!cache.servesPrevious(rec.full, rec.entry, now)) return false;
    } else if (!cache.holds(rec.full, rec.entry, now)) {
      drop(rec);
      return false;
    }
    let limitHeaders: readonly string[] = NO_HEADERS;
    if (rec.limited) {
      // Refused: Koa answers the 429 with this very token (no second one is taken).
      const taken = opts.limiter.take(req);
      if (taken === false) return false;
      limitHeaders = taken;
    }
    cache.touch(rec.full, rec.entry);
    if (previous) rec.previousHits.n++;
    else rec.hits.n++;
    const inm = req.headers['if-none-match'];
    const notModified = inm !== undefined && etagMatches(inm, rec.etag);
    const headers = notModified ? rec.headers304 : rec.headers200;
    res.writeHead(notModified ? 304 : 200, limitHeaders.length ? headers.concat(limitHeaders) : headers);
    answered++;
    if (notModified || rec.method === 'HEAD') res.end();
    else res.end(rec.body);
    const series = notModified ? rec.series304 : rec.series200;
    // Handed to the socket whole (the usual case): the response has ended; else once it closes.
    if (res.writableFinished) series.observe((performance.now() - start) / 1000);
    else res.once('close', () => series.observe((performance.now() - start) / 1000));
    return true;
  }

  return {
    clock: () => {
      const t = opts.clock();
      lastSecond = Math.floor(t / 1000);
      if (Number.isNaN(firstSecond)) firstSecond = lastSecond;
      return t;
    },
    begin(ctx) {
      current = ctx;
      firstSecond = lastSecond = Number.NaN;
    },
    served(ctx, answer) {
      if (!opts.enabled || current !== ctx) return;
      const clockRead = !Number.isNaN(firstSecond);
      if (clockRead && firstSecond !== lastSecond) return;
      (ctx.state as Record<symbol, Pending>)[PENDING] = {
        answer,
        second: clockRead ? firstSecond : undefined,
      };
    },
    record(ctx) {
      if (current === ctx) current = undefined;
      const pending = (ctx.state as Record<symbol, Pending | undefined>)[PENDING];
      if (!pending) return;
      const { answer, second } = pending;
      const method = ctx.method;
      if (
        (method !== 'GET' && method !== 'HEAD') ||
        ctx.status !== 200 ||
        ctx.body !== answer.body ||
        // Still stored (its version, freshness and bound are checked at each replay).
        !opts.cache().stores(answer.full, answer.entry)
      )
        return;
      const headers200: string[] = [];
      const headers304: string[] = [];
      // Node's own list of the names as set (their case kept); absent from this @types/node.
      const res = ctx.res as ServerResponse & { getRawHeaderNames(): string[] };
      for (const raw of res.getRawHeaderNames()) {
        const name = raw.toLowerCase();
        if (PER_REQUEST.has(name)) continue;
        const value = ctx.res.getHeader(name);
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [String(value)]) {
          headers200.push(raw, v);
          if (!BODY_ONLY.has(name)) headers304.push(raw, v);
        }
      }
      const url = ctx.originalUrl;
      const acceptEncoding = ctx.req.headers['accept-encoding'] ?? '';
      const key = keyOf(method, url, acceptEncoding);
      const old = records.get(key);
      if (old) drop(old);
      const rec: FastRecord = {
        key,
        method,
        url,
        acceptEncoding,
        // The version the entry was stored under (the current one may have moved on since).
        version: answer.full.slice(0, answer.full.indexOf('\u0000')),
        full: answer.full,
        entry: answer.entry,
        route: answer.route,
        body: answer.body,
        etag: answer.etag,
        headers200,
        headers304,
        second,
        limited: ctx.state[RATE_LIMIT_SKIPPED] !== true,
        series200: fastRequestSeries(method, answer.route, '200'),
        series304: fastRequestSeries(method, answer.route, '304'),
        hits: fastCacheHits(answer.route),
        previousHits: fastCacheHits(answer.route, 'previous'),
      };
      records.set(key, rec);
      const byUrl = index[method];
      const byAe = byUrl.get(url) ?? new Map<string, FastRecord>();
      byUrl.set(url, byAe);
      byAe.set(acceptEncoding, rec);
      const keys = byEntry.get(answer.entry) ?? new Set<string>();
      byEntry.set(answer.entry, keys);
      keys.add(key);
      if (records.size > MAX_RECORDS) drop(records.values().next().value as FastRecord);
    },
    serve,
    install(app) {
      if (!opts.enabled) return;
      const callback = app.callback.bind(app);
      app.callback = () => {
        const handle = callback();
        return (req, res) => {
          if (!app.proxy && serve(req as IncomingMessage, res as ServerResponse)) return Promise.resolve();
          return handle(req, res);
        };
      };
    },
    get size() {
      return records.size;
    },
    get answered() {
      return answered;
    },
    forget(entry) {
      const keys = byEntry.get(entry);
      if (!keys) return;
      for (const k of keys) {
        const r = records.get(k);
        if (r) {
          records.delete(k);
          unindex(r);
        }
      }
      byEntry.delete(entry);
    },
  };
}
