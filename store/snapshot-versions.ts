/**
 * The life of a set of shared snapshots (store/snapshots.ts tables, store/snapshot-file.ts
 * files): one per data version, built once and read by every request of that version.
 *
 * - A build is readable before it is complete (its readers stream what is written): with
 *   no complete snapshot yet (the first build after start), requests read the one being built.
 * - When the version moves on, requests keep getting the newest complete snapshot
 *   (stale-while-revalidate) while the next one is built in the background; it replaces
 *   the old one (the swap) once complete.
 * - A superseded or failed snapshot is dropped once its last reader is done (readers are counted).
 * - Builds also run eagerly: at start, and while the snapshots are in use (asked for within
 *   `keepWarmMs`) after a data-version change (at most one build per `minGapMs`, one at a
 *   time) and before a snapshot gets old enough for another process's stale sweep
 *   (store/snapshots.ts) to drop it.
 * - `refresh()` asks for a build of the data stored by then whether or not a request asked or the
 *   version moved (readiness does, once the data is complete: api/snapshot-readiness.ts);
 *   `onCurrent` is told of each snapshot that becomes the one served.
 */
import { VaultstreamError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';

/** What a build produces: readable at once, complete when `done` resolves. */
export interface BuildingSnapshot {
  /** Resolves once the snapshot is complete; rejects if its build fails part-way. */
  done: Promise<void>;
  /** Removes the snapshot (idempotent). */
  drop(): Promise<void>;
}

/** One reader's hold on a snapshot; `release` (idempotent) lets a superseded one go. */
export interface SnapshotLease<S> {
  snapshot: S;
  /** The data version seen when the build started (the data is at least that new). */
  version: string;
  /** When the build started (its data was read after this), ms since the epoch. */
  builtAtMs: number;
  /** True when the data version has moved on since the build (a newer one is on its way). */
  stale: boolean;
  release(): Promise<void>;
}

export interface SnapshotVersionsOptions<S extends BuildingSnapshot> {
  /** Starts a build of the current data; resolves once the snapshot is readable. */
  build: () => Promise<S>;
  /** Runs before each build with the snapshots in use, to sweep what dead processes left. */
  sweep?: (inUse: readonly S[]) => Promise<void>;
  /** The current data version (changes when new data lands). */
  version: () => number | string;
  clock?: () => number;
  log: Logger;
  /** Names the snapshots in logs. */
  name: string;
  /** Least time between the starts of two builds (default 5 s). */
  minGapMs?: number;
  /** How often the data version is checked for eager rebuilds (default 1 s). */
  pollMs?: number;
  /** Eager rebuilds stop when no snapshot has been asked for this long (default 15 min). */
  keepWarmMs?: number;
  /** A snapshot older than this is rebuilt even if the version is unchanged (default 30 min). */
  maxAgeMs?: number;
  /** Told of each snapshot that becomes current (the one served), with when its build began. */
  onCurrent?: (snapshot: S, built: { version: string; builtAtMs: number }) => void;
}

/** Older snapshots are not served: the sweep of tables left by crashes drops them after an hour. */
const SERVE_LIMIT_MS = 45 * 60_000;

interface Entry<S> {
  snapshot: S;
  version: string;
  builtAtMs: number;
  readers: number;
  retired: boolean;
}

interface Build<S> {
  /** The entry, once readable. */
  readable: Promise<Entry<S>>;
  /** The entry, once complete (and current). */
  complete: Promise<Entry<S>>;
}

export class SnapshotVersions<S extends BuildingSnapshot> {
  private current: Entry<S> | undefined;
  /** The build in flight once readable (served while there is no complete snapshot). */
  private filling: Entry<S> | undefined;
  private building: Build<S> | undefined;
  private lastStartMs = Number.NEGATIVE_INFINITY;
  private closed = false;
  private lastWantedMs: number;
  private lastFailedMs = Number.NEGATIVE_INFINITY;
  /** Builds begun, and how many had begun at the latest `refresh()` (a build must begin after it). */
  private begun = 0;
  private refreshAt = -1;
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private readonly clock: () => number;
  private readonly minGapMs: number;
  private readonly keepWarmMs: number;
  private readonly maxAgeMs: number;

  constructor(private readonly opts: SnapshotVersionsOptions<S>) {
    this.clock = opts.clock ?? Date.now;
    this.minGapMs = opts.minGapMs ?? 5_000;
    this.keepWarmMs = opts.keepWarmMs ?? 15 * 60_000;
    this.maxAgeMs = opts.maxAgeMs ?? 30 * 60_000;
    // Not in use until a request asks: the build at start serves the first one, and nothing is
    // rebuilt for data versions nobody reads (on a live chain a new one every second or so).
    this.lastWantedMs = Number.NEGATIVE_INFINITY;
  }

  /** Builds the first snapshot now and watches the data version (the timer does not hold the process). */
  start(): void {
    this.build().complete.catch(() => undefined);
    this.poller ??= setInterval(() => this.poll(), this.opts.pollMs ?? 1_000);
    this.poller.unref();
  }

  /**
   * Builds the data stored now, even if no request asked and the data version did not move: a
   * build that begins after this call (after the one in flight, and `minGapMs` after the last one
   * began) becomes the current snapshot.
   */
  refresh(): void {
    this.refreshAt = this.begun;
    this.schedule();
  }

  /** A `refresh()` no build has begun after yet. */
  private refreshDue(): boolean {
    return this.begun <= this.refreshAt;
  }

  /** Stops watching; the snapshots stay until superseded or swept. */
  stop(): void {
    clearInterval(this.poller);
    clearTimeout(this.timer);
    this.poller = this.timer = undefined;
  }

  /**
   * A hold on the newest complete snapshot: at once when one exists (scheduling a rebuild
   * if it is stale), else on the build in flight (or a new one) as soon as it is readable.
   */
  async acquire(): Promise<SnapshotLease<S>> {
    if (this.closed)
      throw new VaultstreamError('STORE_UNAVAILABLE', `${this.opts.name} snapshots are closed`);
    this.lastWantedMs = this.clock();
    const usable = this.current && this.clock() - this.current.builtAtMs < SERVE_LIMIT_MS;
    const entry = usable && this.current ? this.current : (this.filling ?? (await this.build().readable));
    if (entry === this.current && this.outdated(entry)) this.schedule();
    entry.readers++;
    let released = false;
    return {
      snapshot: entry.snapshot,
      version: entry.version,
      builtAtMs: entry.builtAtMs,
      stale: entry.version !== this.versionNow(),
      release: async () => {
        if (released) return;
        released = true;
        entry.readers--;
        await this.dropIfUnused(entry);
      },
    };
  }

  /**
   * Shutdown, before the store closes: no more builds; the one in flight finishes (so nothing
   * queries a closed store), then every snapshot is dropped once its readers are done
   * (nothing of this process is left in the data directory).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.stop();
    await this.settled();
    for (const entry of [this.current, this.filling]) {
      if (!entry) continue;
      entry.retired = true;
      await this.dropIfUnused(entry);
    }
    this.current = this.filling = undefined;
  }

  /** Resolves once no build is in flight (for tests and shutdown). */
  async settled(): Promise<void> {
    while (this.building) await this.building.complete.catch(() => undefined);
  }

  private versionNow(): string {
    return String(this.opts.version());
  }

  private outdated(entry: Entry<S>): boolean {
    return entry.version !== this.versionNow() || this.clock() - entry.builtAtMs > this.maxAgeMs;
  }

  // Eager rebuilds only while the snapshots are in use, and not again after a failure
  // (no tables yet, store closed) until a request asks.
  private poll(): void {
    const now = this.clock();
    const warm = now - this.lastWantedMs < this.keepWarmMs && this.lastFailedMs < this.lastWantedMs;
    if (this.current ? warm && this.outdated(this.current) : warm) this.schedule();
  }

  /** Starts a build now or once `minGapMs` has passed since the last one began. */
  private schedule(): void {
    if (this.building || this.timer || this.closed) return;
    const wait = this.lastStartMs + this.minGapMs - this.clock();
    if (wait <= 0) {
      this.build().complete.catch(() => undefined);
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.current && !this.outdated(this.current) && !this.refreshDue()) return;
      this.build().complete.catch(() => undefined);
    }, wait);
    this.timer.unref();
  }

  /** The build in flight, or a new one; its snapshot becomes current when complete. */
  private build(): Build<S> {
    if (this.building) return this.building;
    let readable!: (e: Entry<S>) => void;
    const whenReadable = new Promise<Entry<S>>((r) => {
      readable = r;
    });
    const complete = this.runBuild(readable).finally(() => {
      this.building = undefined;
      // A refresh asked while this build ran wants the data stored after it began.
      if (this.refreshDue() && !this.closed) this.schedule();
    });
    // A build that fails before it is readable fails its waiting readers too.
    const build: Build<S> = { readable: Promise.race([whenReadable, complete]), complete };
    build.readable.catch(() => undefined);
    this.building = build;
    return build;
  }

  private async runBuild(readable: (e: Entry<S>) => void): Promise<Entry<S>> {
    const { log, name } = this.opts;
    this.lastStartMs = this.clock();
    this.begun++;
    const version = this.versionNow();
    let entry: Entry<S> | undefined;
    try {
      const inUse = [this.current, this.filling].flatMap((e) => (e ? [e.snapshot] : []));
      await this.opts.sweep?.(inUse);
      const builtAtMs = this.clock();
      entry = { snapshot: await this.opts.build(), version, builtAtMs, readers: 0, retired: false };
      this.filling = entry;
      readable(entry);
      await entry.snapshot.done;
      this.filling = undefined;
      const previous = this.current;
      this.current = entry;
      try {
        this.opts.onCurrent?.(entry.snapshot, { version, builtAtMs });
      } catch (err) {
        log.warn({ err }, `${name} snapshot: onCurrent failed`);
      }
      if (previous) {
        previous.retired = true;
        await this.dropIfUnused(previous);
      }
      log.debug({ version, ms: this.clock() - builtAtMs }, `${name} snapshot built`);
      return entry;
    } catch (err) {
      this.lastFailedMs = this.clock();
      if (entry) {
        if (this.filling === entry) this.filling = undefined;
        entry.retired = true;
        await this.dropIfUnused(entry);
      }
      // A build the shutdown cut short (the store closing under it) is no failure of the store.
      if (this.closed) log.debug({ err, version }, `${name} snapshot build stopped by the shutdown`);
      else log.warn({ err, version }, `${name} snapshot build failed`);
      throw err;
    }
  }

  private async dropIfUnused(entry: Entry<S>): Promise<void> {
    if (!entry.retired || entry.readers > 0) return;
    await entry.snapshot
      .drop()
      .catch((err) => this.opts.log.warn({ err }, `${this.opts.name} snapshot drop failed`));
  }
}
