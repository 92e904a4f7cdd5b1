/**
 * The record format of the in-process bus's partition logs, its encoder, and the reader that
 * walks a log, tells a whole record from a torn or corrupt one, and finds the next whole record
 * after damage. The recovery rules this implements are described in `bus/inprocess.ts`.
 *
 * Record layout: u32 length of the rest | u32 crc32 of the rest | u16 key length | key | value.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { VaultstreamError } from '../core/errors.ts';
import { partitionFor } from './partition.ts';
import type { BusMessage, ConsumedMessage } from './types.ts';

/** Bytes before the rest of a record: its length and its CRC. */
export const HEADER_BYTES = 8;
/**
 * Largest "rest" of a record (key length, key and value): 16 MiB, the Kafka bus's fetch size per
 * partition. `publish` refuses a larger message, so a longer length field is damage.
 */
export const MAX_REST_BYTES = 16 << 20;
const READ_CHUNK = 4 << 20;

/**
 * Each partition's records laid out in one buffer (see the record layout above), written in place:
 * no intermediate buffers per message. Throws `BAD_INPUT` (before anything is written) for a key
 * longer than 65535 bytes or a record larger than `MAX_REST_BYTES`.
 */
export function encodeRecords(
  topic: string,
  messages: BusMessage[],
  partitions: number,
): Map<number, Buffer> {
  const partOf = new Int32Array(messages.length);
  const keyLen = new Int32Array(messages.length);
  const bytes = new Float64Array(partitions);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    partOf[i] = partitionFor(m.key, partitions);
    keyLen[i] = Buffer.byteLength(m.key, 'utf8');
    if (keyLen[i] > 0xffff)
      throw new VaultstreamError(
        'BAD_INPUT',
        `bus message key of ${keyLen[i]} bytes on ${topic} (at most 65535)`,
        {
          details: { topic, index: i },
        },
      );
    const rest = 2 + keyLen[i] + m.value.length;
    if (rest > MAX_REST_BYTES)
      throw new VaultstreamError(
        'BAD_INPUT',
        `bus message of ${rest} bytes on ${topic} is larger than the in-process bus takes (${MAX_REST_BYTES})`,
        { details: { topic, index: i, bytes: rest } },
      );
    bytes[partOf[i]] += HEADER_BYTES + rest;
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

/** A stretch of the log that is not a whole record. */
export interface Damage {
  /** File position where the damage starts (where a record was expected). */
  from: number;
  /** Position of the next whole record after it; undefined while none follows (yet). */
  to?: number;
  /** `incomplete`: fewer bytes than the record's header says (torn, or still being written); `corrupt`: a bad length or CRC. */
  kind: 'incomplete' | 'corrupt';
  reason: string;
}

export interface ReadResult {
  messages: ConsumedMessage[];
  /** Position after the last message returned, or after the skipped damage: where the next read starts. */
  next: number;
  /** Damage skipped because a whole record follows it: its bytes are not delivered. */
  skipped: Damage[];
  /** Damage the read stopped at (nothing whole after it yet); `next` is its start. */
  stuck?: Damage;
  /** File size seen by this read. */
  size: number;
}

type Check =
  | { ok: true; len: number }
  | { ok: false; kind: 'incomplete' | 'corrupt' | 'end'; reason: string };

/** Reads records of one partition log from a byte offset. Throws `BUS_UNAVAILABLE` when the file cannot be read. */
export class PartitionReader {
  private fd: number | undefined;
  private buf = Buffer.alloc(0);
  /** File position of `buf[0]`. Positions are numbers here (exact below 2^53 bytes): no BigInt per record. */
  private bufStart = 0;
  /** Last failed search for a whole record after damage: where it started, the file size, and where to resume. */
  private lastScan: { from: number; size: number; resume: number } | undefined;
  /** Records returned by `read` so far (each read once while a batch fills: streams' tests count them). */
  recordsRead = 0;

  constructor(readonly path: string) {}

  private io(op: string, err: unknown): VaultstreamError {
    return new VaultstreamError(
      'BUS_UNAVAILABLE',
      `cannot ${op} bus log ${this.path}: ${(err as Error).message}`,
      {
        cause: err,
        details: { path: this.path },
      },
    );
  }

  /** Opens the file; false when it does not exist yet. */
  private open(): boolean {
    if (this.fd !== undefined) return true;
    // Asked at every poll of every partition, most of whose logs never exist: a failed open is a
    // thrown error, several times the cost of the existence check, on the main thread.
    if (!existsSync(this.path)) return false;
    try {
      this.fd = openSync(this.path, 'r');
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw this.io('open', err);
    }
  }

  /** The file descriptor (for fsync before a commit), opening the file if it exists. */
  handle(): number | undefined {
    return this.open() ? this.fd : undefined;
  }

  /**
   * Up to `max` whole records starting at `from`. Stops early at the end of the log, or at damage
   * with no whole record after it (`stuck`); skips damage followed by a whole record (`skipped`).
   */
  read(from: number, max: number): ReadResult {
    const out: ConsumedMessage[] = [];
    const skipped: Damage[] = [];
    if (!this.open()) return { messages: out, next: from, skipped, size: 0 };
    const size = this.size();
    let pos = from;
    let stuck: Damage | undefined;
    while (out.length < max) {
      const c = this.check(pos, size);
      if (c.ok) {
        const at = this.ensure(pos + HEADER_BYTES, c.len);
        const rest = this.buf.subarray(at, at + c.len);
        const keyLen = rest.readUInt16BE(0);
        // No copy of the value: `ensure` reads into a fresh buffer every time, never over one handed
        // out, so it can stay a view of it (a copy per record was a tenth of the consumer's allocations).
        out.push({
          key: rest.toString('utf8', 2, 2 + keyLen),
          value: rest.subarray(2 + keyLen),
          offset: BigInt(pos),
        });
        pos += HEADER_BYTES + c.len;
        continue;
      }
      if (c.kind === 'end') break;
      const to = this.nextWhole(pos, size);
      const damage: Damage = { from: pos, to, kind: c.kind, reason: c.reason };
      if (to === undefined) {
        stuck = damage;
        break;
      }
      skipped.push(damage);
      pos = to;
    }
    this.recordsRead += out.length;
    return { messages: out, next: pos, skipped, stuck, size };
  }

  private size(): number {
    try {
      return fstatSync(this.fd!).size;
    } catch (err) {
      throw this.io('stat', err);
    }
  }

  /** Whether a whole, intact record starts at `pos` (in a file of `size` bytes). */
  private check(pos: number, size: number): Check {
    const avail = size - pos;
    if (avail <= 0) return { ok: false, kind: 'end', reason: 'end of log' };
    if (avail < HEADER_BYTES)
      return { ok: false, kind: 'incomplete', reason: `${avail} bytes of a record header` };
    const h = this.ensure(pos, HEADER_BYTES);
    if (h < 0) return { ok: false, kind: 'incomplete', reason: 'record header not readable yet' };
    const len = this.buf.readUInt32BE(h);
    const crc = this.buf.readUInt32BE(h + 4);
    if (len < 2 || len > MAX_REST_BYTES)
      return { ok: false, kind: 'corrupt', reason: `impossible record length ${len}` };
    if (avail < HEADER_BYTES + len)
      return { ok: false, kind: 'incomplete', reason: `${avail - HEADER_BYTES} of ${len} record bytes` };
    const at = this.ensure(pos + HEADER_BYTES, len);
    if (at < 0) return { ok: false, kind: 'incomplete', reason: 'record not readable yet' };
    const rest = this.buf.subarray(at, at + len);
    if (rest.readUInt16BE(0) > len - 2)
      return { ok: false, kind: 'corrupt', reason: 'key length past the record' };
    if (crc32(rest) !== crc) return { ok: false, kind: 'corrupt', reason: 'crc mismatch' };
    return { ok: true, len };
  }

  /**
   * Position of the first whole, intact record after `from` (a record whose length fits and whose
   * CRC matches: a false match in damaged bytes has a chance of 2^-32 per candidate), or undefined.
   * A failed search is remembered, so polling a damaged tail does not scan it again until it grows.
   */
  private nextWhole(from: number, size: number): number | undefined {
    let q = from + 1;
    const last = this.lastScan;
    if (last && last.from === from) {
      if (last.size === size) return undefined;
      q = Math.max(q, last.resume);
    }
    let resume = size;
    for (; q + HEADER_BYTES <= size; q++) {
      const h = this.ensure(q, HEADER_BYTES);
      if (h < 0) break;
      const len = this.buf.readUInt32BE(h);
      if (len < 2 || len > MAX_REST_BYTES) continue;
      if (q + HEADER_BYTES + len > size) {
        // Might become whole as the file grows: a later search starts here.
        resume = Math.min(resume, q);
        continue;
      }
      const c = this.check(q, size);
      if (c.ok) {
        this.lastScan = undefined;
        return q;
      }
    }
    this.lastScan = { from, size, resume: Math.min(resume, Math.max(from + 1, size - HEADER_BYTES + 1)) };
    return undefined;
  }

  /** Index in `buf` of the `len` bytes at file position `pos`, reading them if needed; -1 past the end. */
  private ensure(pos: number, len: number): number {
    const rel = pos - this.bufStart;
    if (rel >= 0 && rel + len <= this.buf.length) return rel;
    const size = Math.max(len, READ_CHUNK);
    const b = Buffer.allocUnsafe(size);
    let n: number;
    try {
      n = readSync(this.fd!, b, 0, size, pos);
    } catch (err) {
      throw this.io('read', err);
    }
    this.buf = b.subarray(0, n);
    this.bufStart = pos;
    return n >= len ? 0 : -1;
  }

  close(): void {
    const fd = this.fd;
    this.fd = undefined;
    this.buf = Buffer.alloc(0);
    this.lastScan = undefined;
    if (fd !== undefined) closeSync(fd);
  }
}
