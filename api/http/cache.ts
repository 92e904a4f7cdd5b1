/**
 * The response cache: serialized bodies keyed by (data version, route, normalized
 * query), so a new batch of data changes every key and nothing needs invalidating.
 * Identical concurrent misses share one load (single flight); entries are evicted
 * least recently used first when their bytes (compressed variants included)
 * exceed the bound. Each entry keeps its strong ETag and compresses lazily, once.
 *
 * No stampede on a new version: when data version N+1 has no answer for a key yet, the
 * answer of an earlier version is served (`previous`) while one background load computes
 * N+1's, as long as that earlier version was seen current at most `maxStaleMs` ago (the
 * bound on how old the data behind an answer is; its `X-Data-Watermark` says which data
 * it reflects). A key has at most one such background load at a time, so each version's
 * answer of a hot key is computed at most once, and not at all for a version that passed
 * while another was loading. Past the bound, requests wait for the key's load in flight, when
 * there is one, and take its answer if it is within the bound; else for the current version's.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { type CacheEntry, type LoadResult, toEntry } from './cache-entry.ts';
import type { Encoding } from './encoding.ts';

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/**
 * `stale`: an expired entry served within its grace while one reload replaces it;
 * `previous`: an earlier data version's answer served while the current one's is computed.
 */
export type LookupResult = 'hit' | 'miss' | 'coalesced' | 'stale' | 'previous';

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
  /**
   * How long after its data version was last seen current an answer may still be served
   * while the new version's answer is computed in the background, in ms. 0: never (a new
   * version's first request waits for its load).
   */
  maxStaleMs?: number;
  clock?: () => number;
  /** Called on every lookup, e.g. to count hits and misses per route. */
  onLookup?: (route: string, result: LookupResult) => void;
  /** Called when a load starts: `background` when an earlier answer is served meanwhile. */
  onLoad?: (route: string, background: boolean) => void;
  /** Called when an entry leaves the cache (evicted, expired, cleared). */
  onRemove?: (entry: CacheEntry) => void;
}

/** Superseded versions remembered with the last time each was seen current. */
const VERSIONS_KEPT = 64;

export class ResponseCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<CacheEntry>>();
  /** The stored key (`full`) of each key's newest stored answer, whatever its version. */
  private readonly latest = new Map<string, string>();
  /** Keys (without version) with a background load of a new version running, and that load. */
  private readonly refreshing = new Map<string, Promise<unknown>>();
  /** The version last read, as given and as a string, and the last time it was seen current. */
  private rawVersion: unknown;
  private version = '';
  private versionNo = 0;
  private versionSeenAt = Number.NEGATIVE_INFINITY;
  /** Superseded versions: the last time each was seen current (the staleness of its answers starts there). */
  private readonly supersededAt = new Map<string, number>();
  private readonly keys = new WeakMap<CacheEntry, string>();
  private readonly variants = new WeakMap<CacheEntry, CacheEntry>();
  private readonly opts: Required<Omit<ResponseCacheOptions, 'onLookup' | 'onLoad' | 'onRemove'>> &
    Pick<ResponseCacheOptions, 'onLookup' | 'onLoad' | 'onRemove'>;
  private storedBytes = 0;
  /** A key known to be at the LRU end (moving it there again changes nothing), or undefined. */
  private newest: string | undefined;

  constructor(opts: ResponseCacheOptions) {
    this.opts = {
      ...opts,
      maxBytes: opts.maxBytes ?? 64 * 1024 * 1024,
      ttlMs: opts.ttlMs ?? 60_000,
      staleMs: opts.staleMs ?? 0,
      maxStaleMs: opts.maxStaleMs ?? 0,
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
    waited = false,
  ): Promise<{ entry: CacheEntry; result: LookupResult; full: string }> {
    const now = this.opts.clock();
    const version = this.observe(now);
    const full = `${version}\u0000${key}`;
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
      if (!this.inflight.has(full)) this.load(route, full, key, version, load, now, true).catch(() => {});
      this.touch(full, found);
      this.opts.onLookup?.(route, 'stale');
      return { entry: found, result: 'stale', full };
    }
    if (found) this.remove(full);
    const previous = this.previous(key, full, now);
    if (previous) {
      // An earlier version's answer, recent enough: served while one background load (not the
      // client's: no admission) computes this version's; a key has one such load at a time.
      if (!this.inflight.has(full) && !this.refreshing.has(key)) {
        const refresh = this.load(route, full, key, version, load, now, true)
          .catch(() => {})
          .finally(() => this.refreshing.delete(key));
        this.refreshing.set(key, refresh);
      }
      this.touch(previous.full, previous.entry);
      this.opts.onLookup?.(route, 'previous');
      return { ...previous, result: 'previous' };
    }
    const running = this.inflight.get(full);
    if (running) {
      this.opts.onLookup?.(route, 'coalesced');
      return { entry: await running, result: 'coalesced', full };
    }
    const refresh = this.refreshing.get(key);
    if (refresh && !waited) {
      // Past the bound while the key's background load of a newer version than the stored one
      // still runs (the version moved on again meanwhile, the load being slow): wait for it
      // rather than start another load, then look again. Its answer, superseded only since,
      // is then served within the bound, or this request loads the current version's.
      await refresh;
      return this.get(route, key, load, admit, true);
    }
    const release = admit?.();
    this.opts.onLookup?.(route, 'miss');
    return {
      entry: await this.load(route, full, key, version, load, now, false, release),
      result: 'miss',
      full,
    };
  }

  /** The newest stored answer of `key` under another version than `full`'s, when recent enough to serve. */
  private previous(key: string, full: string, now: number): { entry: CacheEntry; full: string } | undefined {
    const at = this.latest.get(key);
    if (at === undefined || at === full || this.opts.maxStaleMs <= 0) return undefined;
    const entry = this.entries.get(at);
    if (!entry?.version || entry.expiresAt + this.opts.staleMs <= now) return undefined;
    const seen = this.supersededAt.get(entry.version);
    if (seen === undefined || now - seen > this.opts.maxStaleMs) return undefined;
    return { entry, full: at };
  }

  /** Reads the data version, noting when the one before it was last seen current. */
  private observe(now: number): string {
    const raw = this.opts.version();
    if (raw !== this.rawVersion) {
      if (this.rawVersion !== undefined) {
        this.supersededAt.delete(this.version);
        this.supersededAt.set(this.version, this.versionSeenAt);
        if (this.supersededAt.size > VERSIONS_KEPT)
          this.supersededAt.delete(this.supersededAt.keys().next().value as string);
      }
      this.rawVersion = raw;
      this.version = String(raw);
      this.versionNo++;
      this.supersededAt.delete(this.version); // a version seen again is current again
    }
    this.versionSeenAt = now;
    return this.version;
  }

  /** Runs `load` for `full` as the key's one load in flight and stores its result. */
  private load(
    route: string,
    full: string,
    key: string,
    version: string,
    load: () => Promise<LoadResult>,
    now: number,
    background: boolean,
    release?: () => void,
  ) {
    const versionNo = this.versionNo;
    this.opts.onLoad?.(route, background);
    const loading = load()
      .then((r) => {
        const entry = toEntry(r, now + this.opts.ttlMs, now);
        entry.version = version;
        entry.versionNo = versionNo;
        return this.store(full, key, entry);
      })
      .finally(() => {
        this.inflight.delete(full);
        release?.();
      });
    this.inflight.set(full, loading);
    return loading;
  }

  /** The stored key of `key` under the current data version. */
  fullKey(key: string): string {
    return `${this.observe(this.opts.clock())}\u0000${key}`;
  }

  /**
   * True when `entry` is stored under `full` and fresh at `now` (the fast path, which has
   * checked that `entry` is of the current version: so it is seen current now).
   */
  holds(full: string, entry: CacheEntry, now: number): boolean {
    this.versionSeenAt = now;
    return entry.expiresAt > now && this.entries.get(full) === entry;
  }

  /** True while `entry` is stored under `full` (whether fresh or not). */
  stores(full: string, entry: CacheEntry): boolean {
    return this.entries.get(full) === entry;
  }

  /**
   * True when `get` would answer `key` (of `full`) now with `entry`, an earlier version's answer
   * stored under `full`, as `previous`, and start nothing: it is the key's newest answer, within
   * the staleness bound, and the current version's answer is already being computed. The fast
   * path then replays it as Koa would send it (it counts and `touch`es it itself).
   */
  servesPrevious(full: string, entry: CacheEntry, now: number): boolean {
    const key = full.slice(full.indexOf('\u0000') + 1);
    const current = `${this.observe(now)}\u0000${key}`;
    if (!this.inflight.has(current) && !this.refreshing.has(key)) return false;
    return this.previous(key, current, now)?.entry === entry;
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

  /**
   * The variant of `entry` that `make` builds (its `?meta=1` body): made once, its bytes (and its
   * compressed bodies') counted in the entry's, so the bound holds; it goes with the entry.
   */
  variant(entry: CacheEntry, make: (e: CacheEntry) => CacheEntry): CacheEntry {
    let v = this.variants.get(entry);
    if (!v) {
      v = { ...make(entry), parent: entry };
      this.variants.set(entry, v);
      this.grow(entry, v.bytes);
    }
    return v;
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
      p.then((buf) => this.grow(entry.parent ?? entry, buf.length)).catch(
        () => delete entry.encoded[encoding],
      );
    }
    return p;
  }

  /** Drops every entry. */
  clear(): void {
    const gone = [...this.entries.values()];
    this.entries.clear();
    this.latest.clear();
    this.newest = undefined;
    for (const e of gone) this.opts.onRemove?.(e);
    this.storedBytes = 0;
  }

  private store(full: string, key: string, entry: CacheEntry): CacheEntry {
    if (entry.bytes > this.opts.maxBytes) return entry;
    const before = this.latest.get(key);
    // An answer of a version older than the key's newest stored one only serves its waiters.
    const newer = before === undefined ? undefined : this.entries.get(before)?.versionNo;
    if (before !== full && newer !== undefined && newer > (entry.versionNo ?? 0)) return entry;
    this.remove(full); // a stale entry replaced by its reload
    // The key's answer of an earlier version is superseded: it leaves (its memory with it).
    if (before !== undefined && before !== full) this.remove(before);
    this.entries.set(full, entry);
    this.latest.set(key, full);
    this.newest = undefined;
    this.keys.set(entry, full);
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

  private remove(full: string): void {
    const e = this.entries.get(full);
    if (!e) return;
    this.entries.delete(full);
    if (full === this.newest) this.newest = undefined;
    const key = full.slice(full.indexOf('\u0000') + 1);
    if (this.latest.get(key) === full) this.latest.delete(key);
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
