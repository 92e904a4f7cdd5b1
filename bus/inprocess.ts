/**
 * The embedded bus: an append-only log file per topic partition under
 * `<dataDir>/bus`, with the same keys, partitioning and commit-after-handler
 * contract as Kafka. Records survive a crash (fsync before `publish` resolves), and
 * committed offsets live in `<dataDir>/bus/_groups/<group>.json`, so a killed
 * process resumes from its last committed batch. Other processes on the same data
 * directory (e.g. `vaultstream replay` beside `vaultstream start`) may append; the
 * consumer notices new bytes by polling.
 *
 * Modules: this file (the bus: publish, subscribe, lag), bus/inprocess-files.ts (appending to
 * the logs, the committed offsets file), bus/inprocess-subscription.ts (reading, handing over,
 * committing, retrying) and bus/inprocess-log.ts (the record format and the log reader).
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
 *   rewritten: other processes may be appending to it at the same moment. Retention
 *   (bus/inprocess-retention.ts) frees the bytes every group committed past by punching a hole
 *   in the file: it keeps its size and every offset.
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
 *   after a backoff (the subscription's other partitions go on meanwhile); a failed commit is
 *   written again by the next commit or by `stop()`.
 * - Commit: before the offsets file is written, every partition log whose offset moved is
 *   fsync'd (its records may have come from another process that has not fsync'd yet), then the
 *   file is written to a temporary name, fsync'd, renamed over the old one, and the directory
 *   fsync'd. So it is replaced atomically and never points past durable data.
 * - Subscribe: an unreadable or malformed offsets file, or a committed offset past the end of its
 *   log (the log was truncated or replaced behind the bus's back) or before its start (retention
 *   freed it), is a `DECODE_FAILED` error from `subscribe`: the group is never silently restarted from zero or from the wrong place.
 */
import { EventEmitter } from 'node:events';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { VaultstreamError } from '../core/errors.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import {
  ioError,
  isMissing,
  PartitionAppender,
  readOffsetsFile,
  writeOffsetsFile,
} from './inprocess-files.ts';
import { encodeRecords } from './inprocess-log.ts';
import { Retention, readStart } from './inprocess-retention.ts';
import { InProcessSubscription } from './inprocess-subscription.ts';
import type { Bus, BusMessage, SubscribeOptions } from './types.ts';

export interface InProcessBusOptions {
  dir: string;
  partitions: number;
  logger?: Logger;
  /**
   * Partitions handled at once by a subscription (like kafkajs's
   * partitionsConsumedConcurrently): one partition's insert overlaps another's decoding.
   */
  concurrency?: number;
  /**
   * How often the bytes every group committed past are freed (bus/inprocess-retention.ts), while
   * this bus has a subscription; 0: never (the logs keep everything).
   */
  retentionCheckMs?: number;
}

export class InProcessBus implements Bus {
  readonly kind = 'inprocess' as const;
  readonly partitions: number;
  readonly lagUnit = 'bytes' as const;
  readonly concurrency: number;
  readonly dir: string;
  private readonly log: Logger;
  private readonly retention: Retention;
  private readonly retentionCheckMs: number;
  private retentionTimer: NodeJS.Timeout | undefined;
  private readonly appender: PartitionAppender;
  private readonly appended = new EventEmitter();
  private readonly subs = new Set<InProcessSubscription>();

  constructor(opts: InProcessBusOptions) {
    this.dir = opts.dir;
    this.partitions = opts.partitions;
    this.concurrency = Math.max(1, opts.concurrency ?? 2);
    this.log = opts.logger ?? silentLogger;
    this.appender = new PartitionAppender((topic, partition) => this.logPath(topic, partition));
    this.appended.setMaxListeners(0);
    this.retention = new Retention(this, this.log);
    this.retentionCheckMs = opts.retentionCheckMs ?? 0;
  }

  async connect(): Promise<void> {
    try {
      mkdirSync(join(this.dir, '_groups'), { recursive: true });
    } catch (err) {
      throw ioError('create the bus directory', this.dir, err);
    }
    if (this.retentionCheckMs > 0 && !this.retentionTimer) {
      this.retentionTimer = setInterval(() => {
        if (this.subs.size > 0) void this.freeCommitted();
      }, this.retentionCheckMs);
      this.retentionTimer.unref();
    }
  }

  /** Frees the bytes every group committed past (bus/inprocess-retention.ts): bytes newly freed. */
  freeCommitted(): Promise<number> {
    return this.retention.round().catch((err) => {
      this.log.warn({ err }, 'bus retention round failed; retried at the next');
      return 0;
    });
  }

  /** Path of a partition's log file. */
  logPath(topic: string, partition: number): string {
    return join(this.dir, topic, `${partition}.log`);
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    // Writes and fsyncs run on libuv's threads (they were 3% of the main thread in the
    // pipeline benchmark), the partitions' in parallel.
    await Promise.all(
      [...encodeRecords(topic, messages, this.partitions)].map(([p, data]) =>
        this.appender.append(topic, p, data),
      ),
    );
    this.appended.emit(topic);
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
  readCommitted(groupId: string): Promise<Record<string, string>> {
    return readOffsetsFile(this.groupFile(groupId), groupId);
  }

  groupFile(groupId: string): string {
    return join(this.dir, '_groups', `${encodeURIComponent(groupId)}.json`);
  }

  async subscribe(opts: SubscribeOptions): Promise<InProcessSubscription> {
    const committed = await this.readCommitted(opts.groupId);
    const start = await readStart(this.dir);
    let fresh = false;
    for (const t of opts.topics)
      for (let p = 0; p < this.partitions; p++) {
        const k = `${t}/${p}`;
        // A partition the group never committed starts at its log's start (retention freed the
        // rest), and is committed there at once: retention frees nothing the group has not read.
        if (committed[k] === undefined) {
          committed[k] = start[k] ?? '0';
          fresh = true;
        }
        const at = BigInt(committed[k] ?? '0');
        if (at < BigInt(start[k] ?? '0'))
          throw new VaultstreamError(
            'DECODE_FAILED',
            `group ${opts.groupId} committed offset ${at} of ${k}, before its log's start (${start[k]}): retention freed the bytes before it`,
            {
              details: {
                groupId: opts.groupId,
                topic: t,
                partition: p,
                committed: String(at),
                start: start[k],
              },
              hint: `the group's offsets file was restored from an old copy; delete ${this.groupFile(opts.groupId)} to consume from the log's start`,
            },
          );
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
    if (fresh)
      await writeOffsetsFile(this.groupFile(opts.groupId), committed).catch((err) => {
        throw ioError('write committed offsets', this.groupFile(opts.groupId), err);
      });
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
    const start = await readStart(this.dir);
    const out: Record<string, number[]> = {};
    for (const t of topics)
      out[t] = Array.from({ length: this.partitions }, (_, p) =>
        Number(this.endOffset(t, p) - BigInt(committed[`${t}/${p}`] ?? start[`${t}/${p}`] ?? '0')),
      );
    return out;
  }

  async close(): Promise<void> {
    clearInterval(this.retentionTimer);
    this.retentionTimer = undefined;
    await Promise.all([...this.subs].map((s) => s.stop()));
    await this.retention.idle();
    await this.appender.close();
  }
}
