/**
 * The embedded bus: an append-only log file per topic partition under
 * `<dataDir>/bus`, with the same keys, partitioning and commit-after-handler
 * contract as Kafka. Records survive a crash (fsync before `publish` resolves), and
 * committed offsets live in `<dataDir>/bus/_groups/<group>.json`, so a killed
 * process resumes from its last committed batch. Other processes on the same data
 * directory (e.g. `vaultstream replay` beside `vaultstream start`) may append; the
 * consumer notices new bytes by polling.
 *
 * Record layout: u32 length of the rest | u32 crc32 of the rest | u16 key length | key | value.
 * An offset is the byte position of a record; `nextOffset` the position after it.
 */
import { EventEmitter } from 'node:events';
import {
  closeSync,
  fsync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  write,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import { VaultstreamError } from '../core/errors.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import { partitionFor } from './partition.ts';
import type { Batch, Bus, BusMessage, ConsumedMessage, SubscribeOptions, Subscription } from './types.ts';

const READ_CHUNK = 4 << 20;
const writeAsync = promisify(write);
const fsyncAsync = promisify(fsync);

/** Writes all of `data` at the end of the file (opened with O_APPEND), then makes it durable. */
async function appendDurably(fd: number, data: Buffer): Promise<void> {
  let off = 0;
  while (off < data.length) off += (await writeAsync(fd, data, off, data.length - off)).bytesWritten;
  await fsyncAsync(fd);
}
const POLL_MS = 100;

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

/**
 * Each partition's records laid out in one buffer (see the record layout above), written in place:
 * no intermediate buffers per message.
 */
function encodeRecords(messages: BusMessage[], partitions: number): Map<number, Buffer> {
  const partOf = new Int32Array(messages.length);
  const keyLen = new Int32Array(messages.length);
  const bytes = new Float64Array(partitions);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    partOf[i] = partitionFor(m.key, partitions);
    keyLen[i] = Buffer.byteLength(m.key, 'utf8');
    bytes[partOf[i]] += 10 + keyLen[i] + m.value.length;
  }
  const out = new Map<number, Buffer>();
  for (let p = 0; p < partitions; p++) if (bytes[p] > 0) out.set(p, Buffer.allocUnsafe(bytes[p]));
  const pos = new Float64Array(partitions);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const p = partOf[i];
    const buf = out.get(p)!;
    const at = pos[p];
    const restLen = 2 + keyLen[i] + m.value.length;
    buf.writeUInt16BE(keyLen[i], at + 8);
    buf.write(m.key, at + 10, 'utf8');
    m.value.copy(buf, at + 10 + keyLen[i]);
    buf.writeUInt32BE(restLen, at);
    buf.writeUInt32BE(crc32(buf.subarray(at + 8, at + 8 + restLen)), at + 4);
    pos[p] = at + 8 + restLen;
  }
  return out;
}

export class InProcessBus implements Bus {
  readonly kind = 'inprocess' as const;
  readonly partitions: number;
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
    mkdirSync(join(this.dir, '_groups'), { recursive: true });
  }

  /** Path of a partition's log file. */
  logPath(topic: string, partition: number): string {
    return join(this.dir, topic, `${partition}.log`);
  }

  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    // Writes and fsyncs run on libuv's threads (they were 3% of the main thread in the
    // pipeline benchmark), the partitions' in parallel.
    await Promise.all(
      [...encodeRecords(messages, this.partitions)].map(([p, data]) => this.append(topic, p, data)),
    );
    this.appended.emit(topic);
  }

  /**
   * Appends to a partition's log after the appends before it: one publish's records stay whole
   * and in order even if the system splits a write, and `close` waits for every one.
   */
  private append(topic: string, partition: number, data: Buffer): Promise<void> {
    const fd = this.fd(topic, partition);
    const k = `${topic}/${partition}`;
    const done = (this.appends.get(k) ?? Promise.resolve()).then(() => appendDurably(fd, data));
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
      mkdirSync(join(this.dir, topic), { recursive: true });
      fd = openSync(this.logPath(topic, partition), 'a');
      this.fds.set(k, fd);
    }
    return fd;
  }

  /** Byte length of a partition log (its end offset). */
  endOffset(topic: string, partition: number): bigint {
    try {
      return BigInt(statSync(this.logPath(topic, partition)).size);
    } catch {
      return 0n;
    }
  }

  async readCommitted(groupId: string): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(this.groupFile(groupId), 'utf8'));
    } catch {
      return {};
    }
  }

  groupFile(groupId: string): string {
    return join(this.dir, '_groups', `${encodeURIComponent(groupId)}.json`);
  }

  async subscribe(opts: SubscribeOptions): Promise<Subscription> {
    const sub = new InProcessSubscription(this, opts, await this.readCommitted(opts.groupId), this.log);
    this.subs.add(sub);
    const onAppend = () => sub.wake();
    this.appended.on('any', onAppend);
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

/** Reads records of one partition log from a byte offset. */
class PartitionReader {
  private fd: number | undefined;
  private buf = Buffer.alloc(0);
  /** File position of `buf[0]`. Positions are numbers here (exact below 2^53 bytes): no BigInt per record. */
  private bufStart = 0;

  constructor(private readonly path: string) {}

  /** Up to `max` whole records starting at `from`; fewer when the log ends or a record is still being written. */
  read(from: bigint, max: number): ConsumedMessage[] {
    if (this.fd === undefined) {
      try {
        this.fd = openSync(this.path, 'r');
      } catch {
        return [];
      }
    }
    const out: ConsumedMessage[] = [];
    let pos = Number(from);
    while (out.length < max) {
      const head = this.ensure(pos, 8);
      if (head < 0) break;
      const len = this.buf.readUInt32BE(head);
      const crc = this.buf.readUInt32BE(head + 4);
      const at = this.ensure(pos + 8, len);
      if (at < 0) break;
      const rest = this.buf.subarray(at, at + len);
      if (crc32(rest) !== crc)
        throw new VaultstreamError(
          'DECODE_FAILED',
          `bus log ${this.path} is corrupt at byte ${pos} (crc mismatch)`,
        );
      const keyLen = rest.readUInt16BE(0);
      // No copy of the value: `ensure` reads into a fresh buffer every time, never over one handed
      // out, so it can stay a view of it (a copy per record was a tenth of the consumer's allocations).
      out.push({
        key: rest.toString('utf8', 2, 2 + keyLen),
        value: rest.subarray(2 + keyLen),
        offset: BigInt(pos),
      });
      pos += 8 + len;
    }
    return out;
  }

  /** Index in `buf` of the `len` bytes at file position `pos`, reading them if needed; -1 past the end. */
  private ensure(pos: number, len: number): number {
    const rel = pos - this.bufStart;
    if (rel >= 0 && rel + len <= this.buf.length) return rel;
    const size = Math.max(len, READ_CHUNK);
    const b = Buffer.allocUnsafe(size);
    const n = readSync(this.fd!, b, 0, size, pos);
    this.buf = b.subarray(0, n);
    this.bufStart = pos;
    return n >= len ? 0 : -1;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

class InProcessSubscription implements Subscription {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly wakers = new Set<() => void>();
  private commits: Promise<void> = Promise.resolve();
  private readonly readers = new Map<string, PartitionReader>();
  private readonly positions = new Map<string, bigint>();
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
    this.loop = this.run();
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
        if (await this.consumePartition(t, p)) progressed = true;
      }
      this.checkDrained();
      if (!progressed && !this.stopped) await this.sleep(POLL_MS);
    }
  }

  /** Hands one batch of a partition to the handler; true when it did. */
  private async consumePartition(topic: string, partition: number): Promise<boolean> {
    const k = `${topic}/${partition}`;
    const reader = this.readers.get(k)!;
    const from = this.positions.get(k)!;
    let messages = reader.read(from, this.opts.maxBatchSize);
    if (messages.length === 0) return false;
    // Let a partial batch fill for up to maxWaitMs, like Kafka's fetch.max.wait.
    const deadline = Date.now() + this.opts.maxWaitMs;
    while (messages.length < this.opts.maxBatchSize && Date.now() < deadline && !this.stopped) {
      await this.sleep(Math.min(POLL_MS, deadline - Date.now()));
      messages = reader.read(from, this.opts.maxBatchSize);
    }
    const last = messages[messages.length - 1];
    const nextOffset = last.offset + 8n + BigInt(this.recordLength(last));
    const batch: Batch = {
      topic,
      partition,
      messages,
      nextOffset,
      lag: Number(this.bus.endOffset(topic, partition) - nextOffset),
    };
    try {
      await this.opts.handler(batch);
    } catch (err) {
      this.opts.onError?.(err, batch);
      this.log.warn({ err, topic, partition, offset: String(from) }, 'batch handler failed; retrying');
      await this.sleep(1000);
      return true;
    }
    this.positions.set(k, nextOffset);
    await this.commit();
    return true;
  }

  private recordLength(m: ConsumedMessage): number {
    return 2 + Buffer.byteLength(m.key, 'utf8') + m.value.length;
  }

  /** Commits are serialized: workers share one offsets file. */
  private commit(): Promise<void> {
    this.commits = this.commits.then(() => this.writeCommitted());
    return this.commits;
  }

  private async writeCommitted(): Promise<void> {
    const file = this.bus.groupFile(this.opts.groupId);
    for (const [k, v] of this.positions) this.committed[k] = String(v);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.committed));
    const fd = openSync(tmp, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, file);
  }

  private checkDrained(): void {
    for (let i = this.drainWaiters.length - 1; i >= 0; i--) {
      const w = this.drainWaiters[i];
      if ([...w.target].every(([k, end]) => (this.positions.get(k) ?? 0n) >= end)) {
        this.drainWaiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  drained(): Promise<void> {
    const target = new Map<string, bigint>();
    for (const t of this.opts.topics)
      for (let p = 0; p < this.bus.partitions; p++) target.set(`${t}/${p}`, this.bus.endOffset(t, p));
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
    for (const r of this.readers.values()) r.close();
    for (const h of this.stopHooks) h();
    for (const w of this.drainWaiters.splice(0)) w.resolve();
  }
}
