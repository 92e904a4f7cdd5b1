/**
 * Transfers straight from Avro bytes to their TabSeparated line: the pipeline's hottest
 * path without a JS object or string per field. It reads a body written with the newest
 * transfers schema, checks every field as `fastValid` does (schemas/fast-valid.ts), and
 * writes exactly the line that `toRow` + `TsvLines.row` would (lower-cased EVM hex, the
 * event id, `block_time` as `unixTime` renders it, `ver` last). Whatever it is not sure
 * of (another field order, a value zod might reject or change, a number past 2^53,
 * trailing bytes) it declines, having written nothing, and the record takes the general
 * path. Tests hold the two paths to the same bytes (test/unit/transcode.test.ts).
 */
import { BASE58, DIGIT, HEX, SLUG } from '../schemas/fast-valid.ts';
import type { TsvLines } from '../store/tsv.ts';

/** The transfers row's columns, in `toRow` order, then `ver`. */
export const TRANSFER_COLUMNS = [
  'event_id',
  'chain_id',
  'block_number',
  'block_hash',
  'block_time',
  'tx_hash',
  'log_index',
  'removed',
  'vault',
  'token',
  'from_address',
  'to_address',
  'amount',
  'ver',
] as const;

/** What the consumer needs of a transcoded transfer besides its line (state check, ranges). */
export interface TranscodedTransfer {
  eventId: string;
  removed: boolean;
  vault: string;
  chainId: number;
  blockNumber: number;
}

const INT32_MAX = 2147483647;
const DATETIME_MAX = 4_294_967_295;
const AMOUNT_MAX = ((1n << 255n) - 1n).toString();
const TAB = 9;
const NEWLINE = 10;
const COLON = 58;

/** The body being read: `pos` moves on; any failure is `FAIL` (decline). */
const FAIL = -1;
let buf: Buffer;
let pos = 0;
let end = 0;

/** An Avro long (zig-zag varint) within ±2^53, else FAIL (and `failed` set). */
let failed = false;
function readLong(): number {
  let n = 0;
  let scale = 1;
  for (let i = 0; i < 8; i++) {
    if (pos >= end) break;
    const b = buf[pos++];
    n += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) {
      // n < 2^56: exact as a double up to 2^53; beyond, decline.
      if (n > Number.MAX_SAFE_INTEGER) break;
      return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
    }
    scale *= 128;
  }
  failed = true;
  return FAIL;
}

/** Reads a string's length and returns its start (bytes `[start, pos)`), FAIL when out of bounds. */
function readString(): number {
  const len = readLong();
  if (failed || len < 0 || pos + len > end) {
    failed = true;
    return FAIL;
  }
  const start = pos;
  pos += len;
  return start;
}

/**
 * Copies bytes `[from, to)` to `out` at `off` if they pass fast-valid's hexOrBase58 (`0x` +
 * `digits` hex digits, or base58 of 32..88 chars), lower-casing EVM hex as `norm` does;
 * returns the offset after them, or -1. Checking while copying reads each byte once.
 */
function copyHexOrBase58(out: Buffer, off: number, from: number, to: number, digits: number): number {
  const len = to - from;
  if (buf[from] === 48) {
    if (len !== digits + 2 || buf[from + 1] !== 120) return -1;
    out[off++] = 48;
    out[off++] = 120;
    for (let i = from + 2; i < to; i++) {
      const c = buf[i];
      if (HEX[c] !== 1) return -1;
      out[off++] = c >= 65 && c <= 70 ? c | 0x20 : c;
    }
    return off;
  }
  if (len < 32 || len > 88) return -1;
  for (let i = from; i < to; i++) {
    const c = buf[i];
    if (BASE58[c] !== 1) return -1;
    out[off++] = c;
  }
  return off;
}

/** Copies bytes `[from, to)` if every one is in `table` (codes past 127 are in none); the offset after, or -1. */
function copyIn(table: Uint8Array, out: Buffer, off: number, from: number, to: number): number {
  for (let i = from; i < to; i++) {
    const c = buf[i];
    if (table[c] !== 1) return -1;
    out[off++] = c;
  }
  return off;
}

/** Writes a non-negative integer (below 2^53) in decimal; returns the offset after it. */
function writeUint(out: Buffer, off: number, n: number): number {
  let digits = 1;
  for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
  const end = off + digits;
  let p = end;
  while (n >= 10) {
    const q = Math.floor(n / 10);
    out[--p] = 48 + (n - q * 10);
    n = q;
  }
  out[--p] = 48 + n;
  return end;
}

/**
 * Reads the transfer body `body[from, to)` (newest schema) and writes its line with `ver`;
 * undefined, with nothing written, when the record must take the general path.
 */
export function transcodeTransfer(
  body: Buffer,
  from: number,
  to: number,
  ver: number,
  lines: TsvLines,
): TranscodedTransfer | undefined {
  buf = body;
  pos = from;
  end = to;
  failed = false;
  const chainId = readLong();
  const blockNumber = readLong();
  const blockHash = readString();
  const blockHashEnd = pos;
  const timestamp = readLong();
  const txHash = readString();
  const txHashEnd = pos;
  const logIndex = readLong();
  if (failed || pos >= end) return undefined;
  const removedByte = buf[pos++];
  const vault = readString();
  const vaultEnd = pos;
  const token = readString();
  const tokenEnd = pos;
  const fromAddr = readString();
  const fromEnd = pos;
  const toAddr = readString();
  const toEnd = pos;
  const amount = readString();
  const amountEnd = pos;
  if (failed || pos !== end) return undefined;
  // fastValid's number checks; the strings are checked as they are copied below.
  if (chainId < 1 || chainId > INT32_MAX || blockNumber < 0 || timestamp < 0 || timestamp > DATETIME_MAX)
    return undefined;
  if (logIndex < 0 || logIndex > INT32_MAX || removedByte > 1) return undefined;
  const vaultLen = vaultEnd - vault;
  const amountLen = amountEnd - amount;
  if (vaultLen === 0 || buf[vault] === 45) return undefined;
  if (amountLen === 0 || amountLen > AMOUNT_MAX.length || (amountLen > 1 && buf[amount] === 48))
    return undefined;
  if (amountLen === AMOUNT_MAX.length && buf.toString('latin1', amount, amountEnd) > AMOUNT_MAX)
    return undefined;

  // The line is written as the strings are checked: `lines.off` moves only once all passed, so a
  // record declined halfway leaves its bytes past the end, to be overwritten. Every byte written
  // is ASCII with nothing to escape; the line is at most this long.
  const max =
    2 * (blockHashEnd - blockHash) +
    (txHashEnd - txHash) +
    vaultLen +
    (toEnd - token) +
    amountLen +
    3 * 22 +
    48;
  const out = lines.room(max);
  const start = lines.off;
  let off = writeUint(out, start, chainId);
  out[off++] = COLON;
  const hashAt = off;
  off = copyHexOrBase58(out, off, blockHash, blockHashEnd, 64);
  if (off < 0) return undefined;
  const hashLen = off - hashAt;
  out[off++] = COLON;
  off = writeUint(out, off, logIndex);
  const idEnd = off;
  out[off++] = TAB;
  off = writeUint(out, off, chainId);
  out[off++] = TAB;
  off = writeUint(out, off, blockNumber);
  out[off++] = TAB;
  out.copyWithin(off, hashAt, hashAt + hashLen);
  off += hashLen;
  out[off++] = TAB;
  // block_time as unixTime renders it: seconds, ten zero-padded digits below 10^9.
  for (let x = Math.max(timestamp, 1); x < 1_000_000_000; x *= 10) out[off++] = 48;
  off = writeUint(out, off, timestamp);
  out[off++] = TAB;
  off = copyHexOrBase58(out, off, txHash, txHashEnd, 64);
  if (off < 0) return undefined;
  out[off++] = TAB;
  off = writeUint(out, off, logIndex);
  out[off++] = TAB;
  out[off++] = 48 + removedByte;
  out[off++] = TAB;
  const vaultAt = off;
  off = copyIn(SLUG, out, off, vault, vaultEnd);
  if (off < 0) return undefined;
  out[off++] = TAB;
  off = copyHexOrBase58(out, off, token, tokenEnd, 40);
  if (off < 0) return undefined;
  out[off++] = TAB;
  off = copyHexOrBase58(out, off, fromAddr, fromEnd, 40);
  if (off < 0) return undefined;
  out[off++] = TAB;
  off = copyHexOrBase58(out, off, toAddr, toEnd, 40);
  if (off < 0) return undefined;
  out[off++] = TAB;
  off = copyIn(DIGIT, out, off, amount, amountEnd);
  if (off < 0) return undefined;
  out[off++] = TAB;
  off = writeUint(out, off, ver);
  out[off++] = NEWLINE;
  lines.off = off;
  lines.endLine();
  return {
    eventId: out.toString('latin1', start, idEnd),
    removed: removedByte === 1,
    vault: out.toString('latin1', vaultAt, vaultAt + vaultLen),
    chainId,
    blockNumber,
  };
}
