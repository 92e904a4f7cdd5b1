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
 * - the request's second is the one it was made in, when the handler read the clock
 *   before choosing the cache key (time-relative defaults such as `endDate = today`):
 *   such a URL goes through Koa once a second, every other request takes the fast path;
 * - it was made for a request whose handler reached `respondCached` without giving way
 *   to another request (so the clock reads seen are its own).
 * The rate limit (same buckets, same headers), `If-None-Match`/304 (weak comparison, any
 * variant) and the metrics (request histogram, cache hit counter) are applied here as in
 * Koa. Records are bounded in number and dropped when their cache entry leaves the cache.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Context } from 'koa';
import { type CacheEntry, etagMatches, type ResponseCache, type ServedAnswer } from './cache.ts';
import { httpRequestSeconds } from './metrics.ts';
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

interface FastRecord {
  key: string;
  version: string;
  full: string;
  entry: CacheEntry;
  route: string;
  body: Buffer;
  /** Flat name/value lists. */
  headers200: string[];
  headers304: string[];
  /** The request's second when the cache key depended on the clock. */
  second?: number;
  /** The rate limiter applies (its `skip` did not exempt the URL). */
  limited: boolean;
  timer200: { observe(v: number): void };
  timer304: { observe(v: number): void };
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
  const records = new Map<string, FastRecord>();
  const byEntry = new WeakMap<CacheEntry, Set<string>>();
  let current: Context | undefined;
  // The seconds of the clock reads since `begin` (NaN: none); replayable when they agree.
  let firstSecond = Number.NaN;
  let lastSecond = Number.NaN;
  let answered = 0;
  const drop = (r: FastRecord) => {
    records.delete(r.key);
    byEntry.get(r.entry)?.delete(r.key);
  };
  const serve = (req: IncomingMessage, res: ServerResponse): boolean => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const rec = records.get(keyOf(method, req.url, req.headers['accept-encoding']));
    if (!rec) return false;
    return reply(rec, method, req, res);
  };
  const keyOf = (method: string | undefined, url: string | undefined, ae: string | undefined) =>
    `${method} ${url}\u0000${ae ?? ''}`;

  function reply(rec: FastRecord, method: string, req: IncomingMessage, res: ServerResponse): boolean {
    const start = performance.now();
    const now = opts.clock();
    if (
      (rec.second !== undefined && Math.floor(now / 1000) !== rec.second) ||
      String(opts.version()) !== rec.version
    ) {
      drop(rec);
      return false;
    }
    const cache = opts.cache();
    if (!cache.holds(rec.full, rec.entry, now)) {
      drop(rec);
      return false;
    }
    let limitHeaders: string[] | false = [];
    if (rec.limited) {
      // Refused: Koa answers the 429 with this very token (no second one is taken).
      limitHeaders = opts.limiter.take(req);
      if (limitHeaders === false) return false;
    }
    cache.touch(rec.full, rec.entry, rec.route, now);
    const inm = req.headers['if-none-match'];
    const notModified = inm !== undefined && etagMatches(inm, rec.entry.etag);
    const timer = notModified ? rec.timer304 : rec.timer200;
    res.once('close', () => timer.observe((performance.now() - start) / 1000));
    const headers = notModified ? rec.headers304 : rec.headers200;
    res.writeHead(notModified ? 304 : 200, limitHeaders.length ? headers.concat(limitHeaders) : headers);
    answered++;
    if (notModified || method === 'HEAD') res.end();
    else res.end(rec.body);
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
        !opts.cache().holds(answer.full, answer.entry, opts.clock())
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
      const key = keyOf(method, ctx.originalUrl, ctx.req.headers['accept-encoding']);
      const old = records.get(key);
      if (old) drop(old);
      const rec: FastRecord = {
        key,
        // The version the entry was stored under (the current one may have moved on since).
        version: answer.full.slice(0, answer.full.indexOf('\u0000')),
        full: answer.full,
        entry: answer.entry,
        route: answer.route,
        body: answer.body,
        headers200,
        headers304,
        second,
        limited: ctx.state[RATE_LIMIT_SKIPPED] !== true,
        timer200: httpRequestSeconds.labels(method, answer.route, '200'),
        timer304: httpRequestSeconds.labels(method, answer.route, '304'),
      };
      records.set(key, rec);
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
      for (const k of keys) records.delete(k);
      byEntry.delete(entry);
    },
  };
}
