/**
 * The embedded bus: an append-only log file per topic partition under
 * `<dataDir>/bus`, with the same keys, partitioning and commit-after-handler
 * contract as Kafka. Records survive a crash (fsync before `publish` resolves), and
 * committed offsets live in `<dataDir>/bus/_groups/<group>.json`, so a killed
 * process resumes from its last committed batch. Other processes on the same data
 * directory (e.g. `vaultstream replay` beside `vaultstream start`) may append; the
 * consumer notices new bytes by polling.
 *
 * Record layout (`bus/inprocess-log.ts`): u32 length of the rest | u32 crc32 of the rest |
 * u16 key length | key | value. An offset is the byte position of a record; `nextOffset` the
 * position after it.
 *
 * Durability and recovery rules:
 * - Publish: one publish's records for a partition are one buffer appended (O_APPEND) after the
 *   partition's earlier appends of this process, then fsync'd; `publish` resolves only after every
 *   partition's fsync. A key over 65535 bytes or a record over 16 MiB is refused with `BAD_INPUT`
 *   before anything is written; a failed open, write or fsync rejects with `BUS_UNAVAILABLE` (cause
 *   attached) and the file is reopened for the next append. The log is never truncated or
 *   rewritten: other processes may be appending to it at the same moment.
 * - Torn tail: a record shorter than its header says (a writer killed mid-append, or a write in
 *   progress in another process) is not delivered; the reader waits at it. It was never
 *   acknowledged (its publish never resolved). Records appended after it are found again: when a
 *   whole record follows damage, the damage is skipped (see below). `drained()` counts a partition
 *   that ends in such a tail as drained, and reopening the log keeps every whole record before it.
 * - Corruption (an impossible length, a key length past the record, a CRC mismatch), in the middle
 *   or at the end: the reader searches forward, byte by byte, for the next whole record whose CRC
 *   matches. If there is one, the damaged bytes are skipped and every later record is delivered;
 *   if not (corruption at the end), the reader waits there like at a torn tail. Either way the
 *   damage is reported once per subscription: a `DECODE_FAILED` `VaultstreamError` (details:
 *   path, from, to, kind, reason) is logged at error level and passed to `onError` with an empty
 *   batch of that topic and partition whose `nextOffset` is where reading resumes. A skipped
 *   stretch is committed with the batch after it (offsets are not dense).
 * - Reading and committing never crash the process: an I/O error reading a log or writing the
 *   offsets file is a `BUS_UNAVAILABLE` error, reported like damage, and the partition is retried
 *   after a pause; a failed commit is written again by the next commit or by `stop()`.
 * - Commit: before the offsets file is written, every partition log whose offset moved is
 *   fsync'd (its records may have come from another process that has not fsync'd yet), then the
 *   file is written to a temporary name, fsync'd, renamed over the old one, and the directory
 *   fsync'd. So it is replaced atomically and never points past durable data.
 * - Subscribe: an unreadable or malformed offsets file, or a committed offset past the end of its
 *   log (the log was truncated or replaced behind the bus's back), is a `DECODE_FAILED` error
 *   from `subscribe`: the group is never silently restarted from zero or from the wrong place.
 */
import { EventEmitter } from 'node:events';
import { closeSync, fsync, mkdirSync, openSync, statSync, write } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { VaultstreamError } from '../core/errors.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import { type Damage, encodeRecords, PartitionReader } from './inprocess-log.ts';
import type { Batch, Bus, BusMessage, SubscribeOptions, Subscription } from './types.ts';

const writeAsync = promisify(write);
const fsyncAsync = promisify(fsync);
const POLL_MS = 100;
/** Pause before a partition is read again after an error outside the handler. */
const ERROR_PAUSE_MS = 1000;

/** Writes all of `data` at the end of the file (opened with O_APPEND), then makes it durable. */
async function appendDurably(fd: number, data: Buffer): Promise<void> {
  let off = 0;
  while (off < data.length) off += (await writeAsync(fd, data, off, data.length - off)).bytesWritten;
  await fsyncAsync(fd);
}

function ioError(what: string, path: string, err: unknown): VaultstreamError {
  return new VaultstreamError('BUS_UNAVAILABLE', `cannot ${what} ${path}: ${(err as Error).message}`, {
    cause: err,
    details: { path },
  });
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'ENOENT';

export interface InProcessBusOptions {
  dir: string;
  partitions: number;
  logger?: Logger;
  /**
   * Partitions handled at once by a subscription (like kafkajs's
   * partitionsConsumedConcurrently): one partition's insert overlaps another's decoding.
   */
  concurrency?: number;
}

export class InProcessBus implements Bus {
  readonly kind = 'inprocess' as const;
  readonly partitions: number;
  readonly lagUnit = 'bytes' as const;
  readonly concurrency: number;
  private readonly dir: string;
  private readonly log: Logger;
  private readonly fds = new Map<string, number>();
  /** The last append queued on each partition log (`topic/partition`). */
  private readonly appends = new Map<string, Promise<unknown>>();
  private readonly appended = new EventEmitter();
  private readonly subs = new Set<InProcessSubscription>();

  constructor(opts: InProcessBusOptions) {
    this.dir = opts.dir;
    this.partitions = opts.partitions;
    this.concurrency = Math.max(1, opts.concurrency ?? 2);
    this.log = opts.logger ?? silentLogger;
    this.appended.setMaxListeners(0);
  }

  async connect(): Promise<void> {
    try {
      mkdirSync(join(this.dir, '_groups'), { recursive: true });
    } catch (err) {
      throw ioError('create the bus directory', this.dir, err);
    }
  }

  /** Path of a partition's log file. */
  logPath(topic: string, partition: number): string {
    return join(this.dir, topic, `${partition}.log`);
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    // Writes and fsyncs run on libuv's threads (they were 3% of the main thread in the
    // pipeline benchmark), the partitions' in parallel.
    await Promise.all(
      [...encodeRecords(topic, messages, this.partitions)].map(([p, data]) => this.append(topic, p, data)),
    );
    this.appended.emit(topic);
  }

  /**
   * Appends to a partition's log after the appends before it: one publish's records stay whole
   * and in order even if the system splits a write, and `close` waits for every one.
   */
  private append(topic: string, partition: number, data: Buffer): Promise<void> {
    const k = `${topic}/${partition}`;
    const done = (this.appends.get(k) ?? Promise.resolve()).then(async () => {
      const fd = this.fd(topic, partition);
      try {
        await appendDurably(fd, data);
      } catch (err) {
        // The file's state after a failed write or fsync is unknown: the next append reopens it
        // (a partial record left behind is a torn record, which readers skip; see the header).
        this.fds.delete(k);
        try {
          closeSync(fd);
        } catch {}
        throw ioError('append to bus log', this.logPath(topic, partition), err);
      }
    });
    this.appends.set(
      k,
      done.catch(() => undefined),
    );
    return done;
  }

  private fd(topic: string, partition: number): number {
    const k = `${topic}/${partition}`;
    let fd = this.fds.get(k);
    if (fd === undefined) {
      const path = this.logPath(topic, partition);
      try {
        mkdirSync(join(this.dir, topic), { recursive: true });
        fd = openSync(path, 'a');
      } catch (err) {
        throw ioError('open bus log', path, err);
      }
      this.fds.set(k, fd);
    }
    return fd;
  }

  /** Byte length of a partition log (its end offset); 0 when it does not exist yet. */
  endOffset(topic: string, partition: number): bigint {
    const path = this.logPath(topic, partition);
    try {
      return BigInt(statSync(path).size);
    } catch (err) {
      if (isMissing(err)) return 0n;
      throw ioError('stat bus log', path, err);
    }
  }

  /** A group's committed offsets (`topic/partition` -> decimal offset); {} for a group that never committed. */
  async readCommitted(groupId: string): Promise<Record<string, string>> {
    const file = this.groupFile(groupId);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if (isMissing(err)) return {};
      throw ioError('read committed offsets', file, err);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new VaultstreamError('DECODE_FAILED', `committed offsets file ${file} is not valid JSON`, {
        cause: err,
        details: { file, groupId },
        hint: 'restore it, or delete it to consume the group from the start again',
      });
    }
    if (
      parsed === null ||
      typeof parsed !== 'object' ||
      Array.isArray(parsed) ||
      !Object.values(parsed).every((v) => typeof v === 'string' && /^\d+$/.test(v))
    )
      throw new VaultstreamError('DECODE_FAILED', `committed offsets file ${file} is not a map of offsets`, {
        details: { file, groupId },
        hint: 'restore it, or delete it to consume the group from the start again',
      });
    return parsed as Record<string, string>;
  }

  groupFile(groupId: string): string {
    return join(this.dir, '_groups', `${encodeURIComponent(groupId)}.json`);
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    const committed = await this.readCommitted(opts.groupId);
    for (const t of opts.topics)
      for (let p = 0; p < this.partitions; p++) {
        const at = BigInt(committed[`${t}/${p}`] ?? '0');
        const end = this.endOffset(t, p);
        if (at > end)
          throw new VaultstreamError(
            'DECODE_FAILED',
            `group ${opts.groupId} committed offset ${at} of ${t}/${p}, past the end of its log (${end} bytes)`,
            {
              details: {
                groupId: opts.groupId,
                topic: t,
                partition: p,
                committed: String(at),
                end: String(end),
              },
              hint: `the log ${this.logPath(t, p)} was truncated or replaced; restore it, or delete ${this.groupFile(opts.groupId)} to consume from the start`,
            },
          );
      }
    const sub = new InProcessSubscription(this, opts, committed, this.log);
    this.subs.add(sub);
    const onAppend = () => sub.wake();
    for (const t of opts.topics) this.appended.on(t, onAppend);
    sub.onStop(() => {
      this.subs.delete(sub);
      for (const t of opts.topics) this.appended.off(t, onAppend);
    });
    sub.start();
    return sub;
  }

  async lag(groupId: string, topics: string[]): Promise<Record<string, number[]>> {
    const committed = await this.readCommitted(groupId);
    const out: Record<string, number[]> = {};
    for (const t of topics)
      out[t] = Array.from({ length: this.partitions }, (_, p) =>
        Number(this.endOffset(t, p) - BigInt(committed[`${t}/${p}`] ?? '0')),
      );
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subs].map((s) => s.stop()));
    await Promise.all(this.appends.values());
    this.appends.clear();
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

class InProcessSubscription implements Subscription {
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
  private readonly stopHooks: (() => void)[] = [];
  private readonly drainWaiters: { target: Map<string, bigint>; resolve: () => void }[] = [];

  constructor(
    private readonly bus: InProcessBus,
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

  wake(): void {
    for (const w of [...this.wakers]) w();
  }

  start(): void {
    this.loop = this.run().catch((err) => {
      // work() handles its own errors; this is the last line before an unhandled rejection.
      this.log.error({ err }, 'in-process bus subscription failed');
    });
  }

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

  private async work(parts: (readonly [string, number])[]): Promise<void> {
    while (!this.stopped) {
      let progressed = false;
      for (const [t, p] of parts) {
        if (this.stopped) break;
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
          this.report(e, t, p, this.positions.get(`${t}/${p}`) ?? 0n);
          if (!this.stopped) await this.sleep(ERROR_PAUSE_MS);
        }
      }
      this.checkDrained();
      if (!progressed && !this.stopped) await this.sleep(POLL_MS);
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

  /** Hands one batch of a partition to the handler; true when it did. */
  private async consumePartition(topic: string, partition: number): Promise<boolean> {
    const k = `${topic}/${partition}`;
    const reader = this.readers.get(k)!;
    const from = this.positions.get(k)!;
    const max = this.opts.maxBatchSize;
    let r = reader.read(Number(from), max);
    if (r.messages.length > 0) {
      // Let a partial batch fill for up to maxWaitMs, like Kafka's fetch.max.wait.
      const deadline = Date.now() + this.opts.maxWaitMs;
      while (r.messages.length < max && Date.now() < deadline && !this.stopped) {
        await this.sleep(Math.min(POLL_MS, deadline - Date.now()));
        r = reader.read(Number(from), max);
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
      this.log.warn({ err, topic, partition, offset: String(from) }, 'batch handler failed; retrying');
      await this.sleep(ERROR_PAUSE_MS);
      return true;
    }
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
      const tmp = `${file}.${process.pid}.tmp`;
      const fh = await open(tmp, 'w');
      try {
        await fh.writeFile(JSON.stringify(this.committed));
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, file);
      const dir = await open(dirname(file), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
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
