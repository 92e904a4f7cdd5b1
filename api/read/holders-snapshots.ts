/**
 * The shared GET /token-holders snapshots: one per data version, built once and read by
 * every request of that version. When the version moves on, requests keep getting the
 * newest complete snapshot (stale-while-revalidate) while the next one is built in the
 * background; a superseded snapshot is dropped once its last reader is done (readers
 * are counted). Builds also run eagerly: at start, after a data-version change (at most
 * one build per `minGapMs`, one at a time) while the endpoint is in use, and before a
 * snapshot gets old enough for another process's stale-table sweep to drop it.
 */
import type { Logger } from '../../core/log.ts';
import type { Store } from '../../store/client.ts';
import { vaultsWatermark } from './activity-watermark.ts';
import {
  dropStaleSnapshots,
  snapshotTokenHolders,
  type TokenHolderSnapshot,
} from './holders-token-holders.ts';
import { loadRegistry } from './registry.ts';

/** A complete snapshot and what the response says about it. */
export interface BuiltSnapshot {
  snapshot: TokenHolderSnapshot;
  /** The data version seen when the build started (the data is at least that new). */
  version: string;
  /** Oldest chain watermark (unix seconds) read before the build, or null. */
  watermark: number | null;
  /** When the build finished, ms since the epoch. */
  builtAtMs: number;
}

/** One reader's hold on a snapshot; `release` (idempotent) lets a superseded one go. */
export interface SnapshotLease extends BuiltSnapshot {
  /** True when the data version has moved on since the build (a newer one is on its way). */
  stale: boolean;
  release(): Promise<void>;
}

export interface SnapshotOptions {
  store: Store;
  /** The current data version (changes when new data lands). */
  version: () => number | string;
  clock?: () => number;
  log: Logger;
  /** Least time between the starts of two builds (default 5 s). */
  minGapMs?: number;
  /** How often the data version is checked for eager rebuilds (default 1 s). */
  pollMs?: number;
  /** Eager rebuilds stop when the endpoint has not been asked for this long (default 15 min). */
  keepWarmMs?: number;
  /** A snapshot older than this is rebuilt even if the version is unchanged (default 30 min). */
  maxAgeMs?: number;
}

/** Older snapshots are not served: the sweep of tables left by crashes drops them after an hour. */
const SERVE_LIMIT_MS = 45 * 60_000;

interface Entry extends BuiltSnapshot {
  readers: number;
  retired: boolean;
}

/** The snapshots of one API instance over one store. */
export class TokenHolderSnapshots {
  private current: Entry | undefined;
  private building: Promise<Entry> | undefined;
  private lastStartMs = Number.NEGATIVE_INFINITY;
  private lastWantedMs: number;
  private lastFailedMs = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private readonly clock: () => number;
  private readonly minGapMs: number;
  private readonly keepWarmMs: number;
  private readonly maxAgeMs: number;

  constructor(private readonly opts: SnapshotOptions) {
    this.clock = opts.clock ?? Date.now;
    this.minGapMs = opts.minGapMs ?? 5_000;
    this.keepWarmMs = opts.keepWarmMs ?? 15 * 60_000;
    this.maxAgeMs = opts.maxAgeMs ?? 30 * 60_000;
    this.lastWantedMs = this.clock();
  }

  /** Builds the first snapshot now and watches the data version (the timer does not hold the process). */
  start(): void {
    this.build().catch(() => undefined);
    this.poller ??= setInterval(() => this.poll(), this.opts.pollMs ?? 1_000);
    this.poller.unref();
  }

  /** Stops watching; the snapshots stay until superseded or swept. */
  stop(): void {
    clearInterval(this.poller);
    clearTimeout(this.timer);
    this.poller = this.timer = undefined;
  }

  /**
   * A hold on the newest complete snapshot: at once when one exists (scheduling a rebuild
   * if it is stale), else after the build in flight (or a new one).
   */
  async acquire(): Promise<SnapshotLease> {
    this.lastWantedMs = this.clock();
    const usable = this.current && this.clock() - this.current.builtAtMs < SERVE_LIMIT_MS;
    const entry = usable && this.current ? this.current : await this.build();
    if (this.outdated(entry)) this.schedule();
    entry.readers++;
    let released = false;
    return {
      ...entry,
      stale: entry.version !== this.versionNow(),
      release: async () => {
        if (released) return;
        released = true;
        entry.readers--;
        await this.dropIfUnused(entry);
      },
    };
  }

  /** Resolves once no build is in flight (for tests and shutdown). */
  async settled(): Promise<void> {
    while (this.building) await this.building.catch(() => undefined);
  }

  private versionNow(): string {
    return String(this.opts.version());
  }

  private outdated(entry: Entry): boolean {
    return entry.version !== this.versionNow() || this.clock() - entry.builtAtMs > this.maxAgeMs;
  }

  // Eager rebuilds only while the endpoint is in use, and not again after a failure
  // (no tables yet, store closed) until a request asks.
  private poll(): void {
    const now = this.clock();
    const warm = now - this.lastWantedMs < this.keepWarmMs && this.lastFailedMs < this.lastWantedMs;
    if (this.current ? warm && this.outdated(this.current) : warm) this.schedule();
  }

  /** Starts a build now or once `minGapMs` has passed since the last one began. */
  private schedule(): void {
    if (this.building || this.timer) return;
    const wait = this.lastStartMs + this.minGapMs - this.clock();
    if (wait <= 0) {
      this.build().catch(() => undefined);
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.current && !this.outdated(this.current)) return;
      this.build().catch(() => undefined);
    }, wait);
    this.timer.unref();
  }

  /** The build in flight, or a new one; its snapshot becomes current when complete. */
  private build(): Promise<Entry> {
    this.building ??= this.buildEntry().finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  private async buildEntry(): Promise<Entry> {
    const { store, log } = this.opts;
    this.lastStartMs = this.clock();
    const version = this.versionNow();
    try {
      const keep = this.current ? [this.current.snapshot.table.split('.').pop() as string] : [];
      await dropStaleSnapshots(store, keep);
      const vaults = await loadRegistry(store);
      // Read first: the snapshot holds at least the data this watermark vouches for.
      const watermark = await vaultsWatermark(store, vaults);
      const snapshot = await snapshotTokenHolders(store, vaults);
      const entry: Entry = {
        snapshot,
        version,
        watermark,
        builtAtMs: this.clock(),
        readers: 0,
        retired: false,
      };
      const previous = this.current;
      this.current = entry;
      if (previous) {
        previous.retired = true;
        await this.dropIfUnused(previous);
      }
      log.debug({ version, rows: snapshot.count, table: snapshot.table }, 'token-holders snapshot built');
      return entry;
    } catch (err) {
      this.lastFailedMs = this.clock();
      log.warn({ err, version }, 'token-holders snapshot build failed');
      throw err;
    }
  }

  private async dropIfUnused(entry: Entry): Promise<void> {
    if (!entry.retired || entry.readers > 0) return;
    await entry.snapshot
      .drop()
      .catch((err) => this.opts.log.warn({ err }, 'token-holders snapshot drop failed'));
  }
}

const perApi = new WeakMap<object, TokenHolderSnapshots>();

/** The snapshots of the API whose handler deps are `key` (one set per app), started on first use. */
export function tokenHolderSnapshots(key: object, opts: SnapshotOptions): TokenHolderSnapshots {
  let s = perApi.get(key);
  if (!s) {
    s = new TokenHolderSnapshots(opts);
    perApi.set(key, s);
    s.start();
  }
  return s;
}
