/**
 * The reading side of the in-process bus (bus/inprocess.ts states the durability rules):
 * one subscription's workers, each owning a fixed share of the partitions, read batches
 * from the partition logs (bus/inprocess-log.ts), hand them to the handler and commit
 * after it resolved. A failed handler, or a log that cannot be read, is retried after a
 * backoff (core/retry.ts `backoffDelay`) kept per partition: the worker goes on with its
 * other partitions meanwhile. Damage found in a log is reported once.
 */
import { VaultstreamError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import { backoffDelay } from '../core/retry.ts';
import { fsyncAsync, ioError, writeOffsetsFile } from './inprocess-files.ts';
import { type Damage, PartitionReader } from './inprocess-log.ts';
import type { Batch, SubscribeOptions, Subscription } from './types.ts';

const POLL_MS = 100;
/** Pause before a partition is read again after a failure (its handler's or reading its log): doubling up to 5 s. */
const RETRY_PAUSE = { baseMs: 250, maxMs: 5_000, jitter: 0.2 };

/** What a subscription needs of its bus. */
export interface SubscriptionHost {
  readonly partitions: number;
  /** Partitions handled at once. */
  readonly concurrency: number;
  logPath(topic: string, partition: number): string;
  groupFile(groupId: string): string;
  endOffset(topic: string, partition: number): bigint;
}

export class InProcessSubscription implements Subscription {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly wakers = new Set<() => void>();
  private commits: Promise<void> = Promise.resolve();
  private readonly readers = new Map<string, PartitionReader>();
  private readonly positions = new Map<string, bigint>();
  /** Partitions whose position moved since their log was last fsync'd for a commit. */
  private readonly dirty = new Set<string>();
  /** A commit failed: the next one (or stop) writes it again. */
  private commitFailed = false;
  /** Damage each partition's reader is waiting at, with the file size seen then. */
  private readonly stuck = new Map<string, { at: bigint; size: bigint }>();
  /** Damage already reported (`topic/partition@from`), so a poll does not report it again. */
  private readonly reported = new Set<string>();
  /** Partitions failing in a row: how many failures, and when the partition is tried again. */
  private readonly failing = new Map<string, { failures: number; retryAt: number }>();
  private readonly stopHooks: (() => void)[] = [];
  private readonly drainWaiters: { target: Map<string, bigint>; resolve: () => void }[] = [];

  constructor(
    private readonly bus: SubscriptionHost,
    private readonly opts: SubscribeOptions,
    /** The group's committed offsets as read at subscribe time; kept current here (this process owns the group). */
    private readonly committed: Record<string, string>,
    private readonly log: Logger,
  ) {
    for (const t of opts.topics)
      for (let p = 0; p < bus.partitions; p++) {
        const k = `${t}/${p}`;
        this.positions.set(k, BigInt(committed[k] ?? '0'));
        this.readers.set(k, new PartitionReader(bus.logPath(t, p)));
      }
  }

  onStop(fn: () => void): void {
    this.stopHooks.push(fn);
  }

  /** Records read from the partition logs so far (a record delivered twice, after a failed handler, counts twice). */
  get recordsRead(): number {
    let n = 0;
    for (const r of this.readers.values()) n += r.recordsRead;
    return n;
  }

  wake(): void {
    for (const w of [...this.wakers]) w();
  }

  start(): void {
    this.loop = this.run().catch((err) => {
      // work() handles its own errors; this is the last line before an unhandled rejection.
      this.log.error({ err }, 'in-process bus subscription failed');
    });
  }

  /** Waits `ms`, or until woken (new records, stop). */
  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wakers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }

  private async run(): Promise<void> {
    // Each worker owns a fixed share of the partitions, so a partition is never handled twice at once.
    const all = this.opts.topics.flatMap((t) =>
      Array.from({ length: this.bus.partitions }, (_, p) => [t, p] as const),
    );
    const workers = Array.from({ length: Math.min(this.bus.concurrency, all.length) }, (_, w) =>
      this.work(all.filter((_, i) => i % this.bus.concurrency === w)),
    );
    await Promise.all(workers);
  }

  /** A partition failed (again): it is tried again after the backoff, the others meanwhile. */
  private failed(k: string): number {
    const failures = (this.failing.get(k)?.failures ?? 0) + 1;
    const pauseMs = backoffDelay(failures - 1, RETRY_PAUSE);
    this.failing.set(k, { failures, retryAt: Date.now() + pauseMs });
    return pauseMs;
  }

  private async work(parts: (readonly [string, number])[]): Promise<void> {
    while (!this.stopped) {
      let progressed = false;
      let nextRetry = Number.POSITIVE_INFINITY;
      for (const [t, p] of parts) {
        if (this.stopped) break;
        const k = `${t}/${p}`;
        const f = this.failing.get(k);
        if (f && f.retryAt > Date.now()) {
          nextRetry = Math.min(nextRetry, f.retryAt);
          continue;
        }
        try {
          if (await this.consumePartition(t, p)) progressed = true;
        } catch (err) {
          // Reading the log or committing failed (the handler's own errors are handled inside).
          const e =
            err instanceof VaultstreamError
              ? err
              : new VaultstreamError('INTERNAL', `in-process bus: ${(err as Error)?.message ?? err}`, {
                  cause: err,
                });
          this.report(e, t, p, this.positions.get(k) ?? 0n);
          nextRetry = Math.min(nextRetry, Date.now() + this.failed(k));
        }
      }
      this.checkDrained();
      if (!progressed && !this.stopped)
        await this.sleep(Math.max(1, Math.min(POLL_MS, nextRetry - Date.now())));
    }
  }

  /** Logs an error outside the handler and passes it to `onError` with an empty batch of the partition. */
  private report(err: VaultstreamError, topic: string, partition: number, at: bigint): void {
    this.log.error({ err, topic, partition, offset: String(at) }, err.message);
    try {
      this.opts.onError?.(err, { topic, partition, messages: [], nextOffset: at, lag: -1 });
    } catch (cbErr) {
      this.log.error({ err: cbErr }, 'bus onError callback threw');
    }
  }

  private reportDamage(topic: string, partition: number, path: string, d: Damage): void {
    const key = `${topic}/${partition}@${d.from}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    const where = d.to === undefined ? 'no whole record after it yet' : `skipped to byte ${d.to}`;
    const err = new VaultstreamError(
      'DECODE_FAILED',
      `bus log ${path} is damaged at byte ${d.from} (${d.kind}: ${d.reason}); ${where}`,
      {
        details: { path, topic, partition, from: d.from, to: d.to, kind: d.kind, reason: d.reason },
        hint: 'the damaged bytes are not delivered; records after them are',
      },
    );
    this.report(err, topic, partition, BigInt(d.to ?? d.from));
  }

  /** Hands one batch of a partition to the handler; true when it did (or the handler failed). */
  private async consumePartition(topic: string, partition: number): Promise<boolean> {
    const k = `${topic}/${partition}`;
    const reader = this.readers.get(k)!;
    const from = this.positions.get(k)!;
    const max = this.opts.maxBatchSize;
    const r = reader.read(Number(from), max);
    if (r.messages.length > 0) {
      // Let a partial batch fill for up to maxWaitMs, like Kafka's fetch.max.wait. Each wake reads
      // on from where the last read stopped (the log before it never changes): reading the batch
      // again from its start at every publish cost the main thread the batch's CRCs and slices
      // once per publish while an ingester backfilled (bench/sparse-backfill.ts).
      const deadline = Date.now() + this.opts.maxWaitMs;
      while (r.messages.length < max && Date.now() < deadline && !this.stopped) {
        await this.sleep(Math.min(POLL_MS, deadline - Date.now()));
        const more = reader.read(r.next, max - r.messages.length);
        for (const m of more.messages) r.messages.push(m);
        r.skipped.push(...more.skipped);
        r.next = more.next;
        r.stuck = more.stuck;
        r.size = more.size;
      }
    }
    for (const d of r.skipped) this.reportDamage(topic, partition, reader.path, d);
    if (r.stuck) {
      this.stuck.set(k, { at: BigInt(r.stuck.from), size: BigInt(r.size) });
      // An incomplete tail may be a write in progress in another process: reported once skipped.
      if (r.stuck.kind === 'corrupt') this.reportDamage(topic, partition, reader.path, r.stuck);
    } else this.stuck.delete(k);
    if (r.messages.length === 0) return false;
    const nextOffset = BigInt(r.next);
    const batch: Batch = { topic, partition, messages: r.messages, nextOffset, lag: r.size - r.next };
    try {
      await this.opts.handler(batch);
    } catch (err) {
      try {
        this.opts.onError?.(err, batch);
      } catch (cbErr) {
        this.log.error({ err: cbErr }, 'bus onError callback threw');
      }
      const pauseMs = this.failed(k);
      this.log.warn(
        { err, topic, partition, offset: String(from), pauseMs },
        'batch handler failed; retrying',
      );
      return true;
    }
    this.failing.delete(k);
    this.positions.set(k, nextOffset);
    this.dirty.add(k);
    await this.commit();
    return true;
  }

  /** Commits are serialized: workers share one offsets file. A failed commit does not block later ones. */
  private commit(): Promise<void> {
    const next = this.commits.catch(() => undefined).then(() => this.writeCommitted());
    this.commits = next;
    return next;
  }

  private async writeCommitted(): Promise<void> {
    const file = this.bus.groupFile(this.opts.groupId);
    try {
      // The records up to each new offset are made durable first: they may have been read from
      // the page cache before their writer (maybe another process) fsync'd them.
      for (const k of [...this.dirty]) {
        const fd = this.readers.get(k)!.handle();
        if (fd !== undefined) await fsyncAsync(fd);
        this.dirty.delete(k);
      }
      for (const [k, v] of this.positions) this.committed[k] = String(v);
      await writeOffsetsFile(file, this.committed);
      this.commitFailed = false;
    } catch (err) {
      this.commitFailed = true;
      throw err instanceof VaultstreamError ? err : ioError('write committed offsets', file, err);
    }
  }

  private checkDrained(): void {
    for (let i = this.drainWaiters.length - 1; i >= 0; i--) {
      const w = this.drainWaiters[i];
      const done = [...w.target].every(([k, end]) => {
        const pos = this.positions.get(k) ?? 0n;
        if (pos >= end) return true;
        // Waiting at a torn or corrupt tail that covers everything up to the target: nothing more to read.
        const s = this.stuck.get(k);
        return s !== undefined && s.at === pos && s.size >= end;
      });
      if (done) {
        this.drainWaiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  drained(): Promise<void> {
    const target = new Map<string, bigint>();
    try {
      for (const t of this.opts.topics)
        for (let p = 0; p < this.bus.partitions; p++) target.set(`${t}/${p}`, this.bus.endOffset(t, p));
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve) => {
      this.drainWaiters.push({ target, resolve });
      this.wake();
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return this.loop;
    this.stopped = true;
    this.wake();
    await this.loop;
    if (this.commitFailed)
      await this.commit().catch((err) =>
        this.log.error(
          { err },
          'in-process bus: committing offsets at stop failed; uncommitted batches will be redelivered',
        ),
      );
    for (const r of this.readers.values()) {
      try {
        r.close();
      } catch {}
    }
    for (const h of this.stopHooks) h();
    for (const w of this.drainWaiters.splice(0)) w.resolve();
  }
}
