/**
 * The response cache: serialized bodies keyed by (data version, route, normalized
 * query), so a new batch of data changes every key and nothing needs invalidating.
 * Identical concurrent misses share one load (single flight); entries are evicted
 * least recently used first when their bytes (compressed variants included)
 * exceed the bound. Each entry keeps its strong ETag and compresses lazily, once.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Context } from 'koa';
import { type Encoding, etagMatches, pickEncoding } from './encoding.ts';
import { QUERY_KEY } from './params.ts';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

export {
  acceptableEncoding,
  compression,
  type Encoding,
  etagMatches,
  pickEncoding,
} from './encoding.ts';

/** What a loader produces: a JSON-serializable value (or a ready string) and the data watermark behind it. */
export interface LoadResult {
  body: unknown;
  /** Default `application/json; charset=utf-8` (the body is JSON-serialized unless it is a string). */
  contentType?: string;
  /** Oldest chain watermark behind the answer: an ISO string, a Date, or Unix seconds. */
  watermark?: string | number | Date | null;
}

export interface CacheEntry {
  readonly body: Buffer;
  /** Strong ETag of the identity body, quoted. */
  readonly etag: string;
  readonly contentType: string;
  readonly watermark?: string;
  readonly expiresAt: number;
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
  bytes: number;
}

/** `stale`: an expired entry served within its grace while one reload replaces it. */
export type LookupResult = 'hit' | 'miss' | 'coalesced' | 'stale';

export interface ResponseCacheOptions {
  /** The current data version; it changes when new data lands (supplied by the server). */
  version: () => number | string;
  /** Bound of stored bytes (bodies and their compressed variants); 0 stores nothing (single flight still applies). */
  maxBytes?: number;
  /** Longest life of an entry within one data version, in ms (time-relative defaults move on). */
  ttlMs?: number;
  /**
   * Grace after `ttlMs`, in ms, in which an expired entry of the current data version is still
   * served while a single background load replaces it (server-side stale-while-revalidate: a
   * hot key's expiry does not make every request wait for the store). 0 (default): none.
   */
  staleMs?: number;
  clock?: () => number;
  /** Called on every lookup, e.g. to count hits and misses per route. */
  onLookup?: (route: string, result: LookupResult) => void;
  /** Called when an entry leaves the cache (evicted, expired, cleared). */
  onRemove?: (entry: CacheEntry) => void;
}

function watermarkString(w: LoadResult['watermark']): string | undefined {
  if (w === undefined || w === null) return undefined;
  if (w instanceof Date) return w.toISOString();
  if (typeof w === 'number') return new Date(w * 1000).toISOString();
  return w;
}

/** Serializes a load result into a cache entry (body bytes, strong ETag). */
export function toEntry(result: LoadResult, expiresAt: number): CacheEntry {
  const isText = typeof result.body === 'string' || Buffer.isBuffer(result.body);
  const body = Buffer.isBuffer(result.body)
    ? result.body
    : Buffer.from(isText ? (result.body as string) : JSON.stringify(result.body));
  const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  return {
    body,
    etag,
    contentType:
      result.contentType ?? (isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8'),
    watermark: watermarkString(result.watermark),
    expiresAt,
    encoded: {},
    bytes: body.length,
  };
}

/** Sorts a query string's parameters by name (keeping the order of repeated ones) so equal queries share a key. */
export function normalizeQuery(querystring: string): string {
  if (!querystring) return '';
  return querystring
    .split('&')
    .filter(Boolean)
    .map((part, i) => ({ name: part.split('=', 1)[0], part, i }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.i - b.i))
    .map((p) => p.part)
    .join('&');
}

export class ResponseCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  private readonly keys = new WeakMap<CacheEntry, string>();
  private readonly opts: Required<Omit<ResponseCacheOptions, 'onLookup' | 'onRemove'>> &
    Pick<ResponseCacheOptions, 'onLookup' | 'onRemove'>;
  private storedBytes = 0;
  /** A key known to be at the LRU end (moving it there again changes nothing), or undefined. */
  private newest: string | undefined;

  constructor(opts: ResponseCacheOptions) {
    this.opts = {
      ...opts,
      maxBytes: opts.maxBytes ?? 64 * 1024 * 1024,
      ttlMs: opts.ttlMs ?? 60_000,
      staleMs: opts.staleMs ?? 0,
      clock: opts.clock ?? Date.now,
    };
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.storedBytes;
  }

  /** Entries held now. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The entry for (current data version, `key`): from the cache, from a load
   * already running for the same key, or from a new call of `load`. A failed
   * load is not cached; every request waiting on it gets its error.
   */
  async get(
    route: string,
    key: string,
    load: () => Promise<LoadResult>,
    admit?: () => () => void,
  ): Promise<{ entry: CacheEntry; result: LookupResult; full: string }> {
    const full = this.fullKey(key);
    const now = this.opts.clock();
    const found = this.entries.get(full);
    if (found && found.expiresAt > now) {
      this.entries.delete(full); // re-insert: Map order is the LRU order
      this.entries.set(full, found);
      this.newest = full;
      this.opts.onLookup?.(route, 'hit');
      return { entry: found, result: 'hit', full };
    }
    if (found && found.expiresAt + this.opts.staleMs > now) {
      // Within the grace: this request gets the stale entry; one load (not the client's: no
      // admission) replaces it. A failed reload leaves the entry until its grace ends.
      if (!this.inflight.has(full)) this.load(full, load, now).catch(() => {});
      this.touch(full, found);
      this.opts.onLookup?.(route, 'stale');
      return { entry: found, result: 'stale', full };
    }
    if (found) this.remove(full);
    const running = this.inflight.get(full);
    if (running) {
      this.opts.onLookup?.(route, 'coalesced');
      return { entry: await running, result: 'coalesced', full };
    }
    const release = admit?.();
    this.opts.onLookup?.(route, 'miss');
    return { entry: await this.load(full, load, now, release), result: 'miss', full };
  }

  /** Runs `load` for `full` as the key's one load in flight and stores its result. */
  private load(full: string, load: () => Promise<LoadResult>, now: number, release?: () => void) {
    const loading = load()
      .then((r) => this.store(full, toEntry(r, now + this.opts.ttlMs)))
      .finally(() => {
        this.inflight.delete(full);
        release?.();
      });
    this.inflight.set(full, loading);
    return loading;
  }

  /** The stored key of `key` under the current data version. */
  fullKey(key: string): string {
    return `${this.opts.version()}\u0000${key}`;
  }

  /** True when `entry` is stored under `full` and fresh at `now`. */
  holds(full: string, entry: CacheEntry, now: number): boolean {
    return entry.expiresAt > now && this.entries.get(full) === entry;
  }

  /**
   * A hit on `entry`, which `holds` just found stored under `full` (the fast path): moves it
   * to the LRU end. Not counted through `onLookup`: the fast path counts its hits itself.
   */
  touch(full: string, entry: CacheEntry): void {
    if (full === this.newest) return; // already the most recently used
    this.entries.delete(full);
    this.entries.set(full, entry);
    this.newest = full;
  }

  /** The body of `entry` compressed with `encoding`, computed once per entry. */
  encode(entry: CacheEntry, encoding: Encoding): Promise<Buffer> {
    let p = entry.encoded[encoding];
    if (!p) {
      p =
        encoding === 'br'
          ? brotli(entry.body, {
              params: {
                [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
                [zlib.constants.BROTLI_PARAM_SIZE_HINT]: entry.body.length,
              },
            })
          : gzip(entry.body);
      entry.encoded[encoding] = p;
      p.then((buf) => this.grow(entry, buf.length)).catch(() => delete entry.encoded[encoding]);
    }
    return p;
  }

  /** Drops every entry. */
  clear(): void {
    const gone = [...this.entries.values()];
    this.entries.clear();
    this.newest = undefined;
    for (const e of gone) this.opts.onRemove?.(e);
    this.storedBytes = 0;
  }

  private store(key: string, entry: CacheEntry): CacheEntry {
    if (entry.bytes > this.opts.maxBytes) return entry;
    this.remove(key); // a stale entry replaced by its reload
    this.entries.set(key, entry);
    this.newest = undefined;
    this.keys.set(entry, key);
    this.storedBytes += entry.bytes;
    this.evict();
    return entry;
  }

  private grow(entry: CacheEntry, by: number): void {
    entry.bytes += by;
    const key = this.keys.get(entry);
    if (key === undefined || this.entries.get(key) !== entry) return;
    this.storedBytes += by;
    this.evict();
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    if (key === this.newest) this.newest = undefined;
    this.storedBytes -= e.bytes;
    this.opts.onRemove?.(e);
  }

  private evict(): void {
    for (const key of this.entries.keys()) {
      if (this.storedBytes <= this.opts.maxBytes) return;
      this.remove(key);
    }
  }
}

export interface RespondOptions {
  maxAgeSeconds?: number;
  staleWhileRevalidateSeconds?: number;
  /** Bodies below this size are sent uncompressed. */
  compressMinBytes?: number;
  /** Cache key; default method, path and the validated query (else the normalized query string). */
  key?: string;
  /** Called before a new load starts (a miss that no running load covers): throws to refuse it, else returns its release. */
  admit?: () => () => void;
  /** Called with what was sent (200 only), so the answer can be replayed for the same request (kit's fast path). */
  served?: (ctx: Context, answer: ServedAnswer) => void;
}

/** A 200 answered from the cache: the entry, its stored key, the route and the bytes sent. */
export interface ServedAnswer {
  entry: CacheEntry;
  full: string;
  route: string;
  body: Buffer;
}

/** The router's path template of the request (`/v1/vaults/:slug`), or `unmatched`. */
export function routeOf(ctx: Context): string {
  return (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
}

/**
 * Answers the request from `cache`: loads on a miss, then sets `ETag`,
 * `Cache-Control: public, max-age=<n>, stale-while-revalidate=<m>`, `Vary`,
 * `X-Data-Watermark` (when the loader gave one) and answers 304 when
 * `If-None-Match` matches, else the body, gzip or brotli when accepted.
 * Validate the request before calling this: a loader's error is thrown here.
 */
export async function respondCached(
  ctx: Context,
  cache: ResponseCache,
  load: () => Promise<LoadResult>,
  opts: RespondOptions = {},
): Promise<void> {
  // HEAD shares GET's entry.
  const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
  // The validated query (parseQuery's canonical form) when the handler parsed one, so a
  // parameter validation ignores (`?_=<random>`) cannot make a new key; else the raw query.
  const parsed = ctx.state?.[QUERY_KEY];
  const query = typeof parsed === 'string' ? `=${parsed}` : normalizeQuery(ctx.querystring);
  const key = opts.key ?? `${method} ${ctx.path}?${query}`;
  const route = routeOf(ctx);
  const { entry, full } = await cache.get(route, key, load, opts.admit);
  const encoding =
    entry.body.length >= (opts.compressMinBytes ?? 1024) && pickEncoding(ctx.get('Accept-Encoding'));
  ctx.set(
    'Cache-Control',
    `public, max-age=${opts.maxAgeSeconds ?? 5}, stale-while-revalidate=${opts.staleWhileRevalidateSeconds ?? 30}`,
  );
  ctx.vary('Accept-Encoding');
  ctx.set('ETag', encoding ? `${entry.etag.slice(0, -1)}-${encoding}"` : entry.etag);
  if (entry.watermark) ctx.set('X-Data-Watermark', entry.watermark);
  if (etagMatches(ctx.get('If-None-Match'), entry.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = entry.contentType;
  let body: Buffer;
  if (encoding) {
    body = await cache.encode(entry, encoding);
    ctx.body = body;
    ctx.set('Content-Encoding', encoding);
  } else ctx.body = body = entry.body;
  opts.served?.(ctx, { entry, full, route, body });
}
