/**
 * ClickHouse's compressed block format, which its HTTP interface speaks with `compress=1`
 * (answers) and `decompress=1` (request bodies), and which the JDBC v2 driver asks for on every
 * query. Each block: a 16-byte CityHash128 (v1.0.2, the version ClickHouse ships) of the rest,
 * 1 byte method (0x82 LZ4, 0x02 none), UInt32 LE size of header + payload (header = these 9
 * bytes), UInt32 LE uncompressed size, then the payload.
 *
 * Answers are written as LZ4 blocks (the JDBC v2 driver accepts only 0x82) holding literals
 * only: a valid LZ4 block that every decoder reads, without spending this server's one core on
 * compressing bytes that only cross loopback. Request bodies may be LZ4 or none.
 */
import { ClickHouseHttpError } from './protocol.ts';

const MASK = (1n << 64n) - 1n;
const k0 = 0xc3a5c85c97cb3127n;
const k1 = 0xb492b66fbe98f273n;
const k2 = 0x9ae16a3b2f90404fn;
const k3 = 0xc949d7c7509e6557n;
const kMul = 0x9ddfea08eb382d69n;

const m = (x: bigint): bigint => x & MASK;
const f64 = (b: Buffer, i: number): bigint => b.readBigUInt64LE(i);
const f32 = (b: Buffer, i: number): bigint => BigInt(b.readUInt32LE(i));
const rot = (v: bigint, s: bigint): bigint => (s === 0n ? v : m((v >> s) | (v << (64n - s))));
const shiftMix = (v: bigint): bigint => v ^ (v >> 47n);

function hashLen16(u: bigint, v: bigint): bigint {
  let a = m((u ^ v) * kMul);
  a ^= a >> 47n;
  let b = m((v ^ a) * kMul);
  b ^= b >> 47n;
  return m(b * kMul);
}

function hashLen0to16(s: Buffer, o: number, len: number): bigint {
  const n = BigInt(len);
  if (len > 8) {
    const a = f64(s, o);
    const b = f64(s, o + len - 8);
    // RotateByAtLeast1: len is 9..16 here, never 0.
    return hashLen16(a, rot(m(b + n), n)) ^ b;
  }
  if (len >= 4) return hashLen16(m(n + (f32(s, o) << 3n)), f32(s, o + len - 4));
  if (len > 0) {
    const y = (BigInt(s[o] as number) + (BigInt(s[o + (len >> 1)] as number) << 8n)) & 0xffffffffn;
    const z = (n + (BigInt(s[o + len - 1] as number) << 2n)) & 0xffffffffn;
    return m(shiftMix(m(y * k2) ^ m(z * k3)) * k2);
  }
  return k2;
}

function cityMurmur(s: Buffer, o: number, len: number, lo: bigint, hi: bigint): [bigint, bigint] {
  let a = lo;
  let b = hi;
  let c: bigint;
  let d: bigint;
  let l = len - 16;
  if (l <= 0) {
    a = m(shiftMix(m(a * k1)) * k1);
    c = m(m(b * k1) + hashLen0to16(s, o, len));
    d = shiftMix(m(a + (len >= 8 ? f64(s, o) : c)));
  } else {
    c = hashLen16(m(f64(s, o + len - 8) + k1), a);
    d = hashLen16(m(b + BigInt(len)), m(c + f64(s, o + len - 16)));
    a = m(a + d);
    do {
      a ^= m(shiftMix(m(f64(s, o) * k1)) * k1);
      a = m(a * k1);
      b ^= a;
      c ^= m(shiftMix(m(f64(s, o + 8) * k1)) * k1);
      c = m(c * k1);
      d ^= c;
      o += 16;
      l -= 16;
    } while (l > 0);
  }
  a = hashLen16(a, c);
  b = hashLen16(d, b);
  return [a ^ b, hashLen16(b, a)];
}

function weak32(s: Buffer, o: number, a: bigint, b: bigint): [bigint, bigint] {
  const w = f64(s, o);
  const x = f64(s, o + 8);
  const y = f64(s, o + 16);
  const z = f64(s, o + 24);
  a = m(a + w);
  b = rot(m(b + a + z), 21n);
  const c = a;
  a = m(a + x + y);
  b = m(b + rot(a, 44n));
  return [m(a + z), m(b + c)];
}

function city128WithSeed(s: Buffer, o: number, len: number, lo: bigint, hi: bigint): [bigint, bigint] {
  if (len < 128) return cityMurmur(s, o, len, lo, hi);
  let x = lo;
  let y = hi;
  let z = m(BigInt(len) * k1);
  let v0 = m(rot(y ^ k1, 49n) * k1 + f64(s, o));
  let v1 = m(rot(v0, 42n) * k1 + f64(s, o + 8));
  let w0 = m(rot(m(y + z), 35n) * k1 + x);
  let w1 = m(rot(m(x + f64(s, o + 88)), 53n) * k1);
  do {
    for (let half = 0; half < 2; half++) {
      x = m(rot(m(x + y + v0 + f64(s, o + 16)), 37n) * k1);
      y = m(rot(m(y + v1 + f64(s, o + 48)), 42n) * k1);
      x ^= w1;
      y ^= v0;
      z = rot(z ^ w0, 33n);
      [v0, v1] = weak32(s, o, m(v1 * k1), m(x + w0));
      [w0, w1] = weak32(s, o + 32, m(z + w1), y);
      [z, x] = [x, z];
      o += 64;
    }
    len -= 128;
  } while (len >= 128);
  y = m(y + m(rot(w0, 37n) * k0) + z);
  x = m(x + m(rot(m(v0 + z), 49n) * k0));
  for (let done = 0; done < len; ) {
    done += 32;
    y = m(m(rot(m(y - x), 42n) * k0) + v1);
    w0 = m(w0 + f64(s, o + len - done + 16));
    x = m(m(rot(x, 49n) * k0) + w0);
    w0 = m(w0 + v0);
    [v0, v1] = weak32(s, o + len - done, v0, v1);
  }
  x = hashLen16(x, v0);
  y = hashLen16(y, w0);
  return [m(hashLen16(m(x + v1), w1) + y), hashLen16(m(x + w1), m(y + v1))];
}

/** CityHash128 v1.0.2 of `s` as [low64, high64] (ClickHouse writes low then high, each LE). */
export function cityHash128(s: Buffer): [bigint, bigint] {
  const len = s.length;
  if (len >= 16) return city128WithSeed(s, 16, len - 16, f64(s, 0) ^ k3, f64(s, 8));
  if (len >= 8) return city128WithSeed(s, 0, 0, f64(s, 0) ^ m(BigInt(len) * k0), f64(s, len - 8) ^ k1);
  return city128WithSeed(s, 0, len, k0, k1);
}

const LZ4 = 0x82;
const NONE = 0x02;
const HEADER = 9;
/** ClickHouse's own block size for compressed output (max_compress_block_size). */
const BLOCK = 1 << 20;

/** One LZ4 block holding `raw` as a single run of literals. */
function lz4Literals(raw: Buffer): Buffer {
  const n = raw.length;
  const ext = n >= 15 ? Math.floor((n - 15) / 255) + 1 : 0;
  const out = Buffer.alloc(1 + ext + n);
  out[0] = Math.min(n, 15) << 4;
  if (n >= 15) {
    let rest = n - 15;
    let i = 1;
    for (; rest >= 255; rest -= 255) out[i++] = 255;
    out[i] = rest;
  }
  raw.copy(out, 1 + ext);
  return out;
}

function block(raw: Buffer): Buffer {
  const payload = lz4Literals(raw);
  const out = Buffer.alloc(16 + HEADER + payload.length);
  out[16] = LZ4;
  out.writeUInt32LE(HEADER + payload.length, 17);
  out.writeUInt32LE(raw.length, 21);
  payload.copy(out, 16 + HEADER);
  const [lo, hi] = cityHash128(out.subarray(16));
  out.writeBigUInt64LE(lo, 0);
  out.writeBigUInt64LE(hi, 8);
  return out;
}

/**
 * `data` as ClickHouse compressed blocks of at most 1 MiB each (an empty answer is no block).
 * Hashing runs at ~40 MiB/s on this process's thread, which also serves the API: it yields
 * between blocks so an API request waits at most one block (~25 ms), not the whole answer.
 */
export async function compressBlocks(data: Buffer): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let i = 0; i < data.length; i += BLOCK) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    parts.push(block(data.subarray(i, i + BLOCK)));
  }
  return Buffer.concat(parts);
}

function lz4Decode(src: Buffer, size: number): Buffer {
  const out = Buffer.alloc(size);
  let i = 0;
  let o = 0;
  const bad = () => new ClickHouseHttpError(271, 'Cannot decompress the request body: malformed LZ4 block');
  const length = (n: number): number => {
    if (n !== 15) return n;
    for (;;) {
      const b = src[i++];
      if (b === undefined) throw bad();
      n += b;
      if (b !== 255) return n;
    }
  };
  while (i < src.length) {
    const token = src[i++] as number;
    const lits = length(token >> 4);
    if (i + lits > src.length || o + lits > size) throw bad();
    src.copy(out, o, i, i + lits);
    i += lits;
    o += lits;
    if (i >= src.length) break;
    if (i + 2 > src.length) throw bad();
    const offset = src.readUInt16LE(i);
    i += 2;
    const len = length(token & 15) + 4;
    if (offset === 0 || offset > o || o + len > size) throw bad();
    for (let k = 0; k < len; k++, o++) out[o] = out[o - offset] as number;
  }
  if (o !== size) throw bad();
  return out;
}

/** The bytes inside ClickHouse compressed blocks (a `decompress=1` body); checksums are checked. */
export function decompressBlocks(data: Buffer, maxBytes: number): Buffer {
  const parts: Buffer[] = [];
  let total = 0;
  for (let i = 0; i < data.length; ) {
    if (i + 16 + HEADER > data.length)
      throw new ClickHouseHttpError(271, 'Cannot decompress the request body: truncated block header');
    const method = data[i + 16];
    const size = data.readUInt32LE(i + 17);
    const raw = data.readUInt32LE(i + 21);
    if (size < HEADER || i + 16 + size > data.length)
      throw new ClickHouseHttpError(271, 'Cannot decompress the request body: truncated block');
    total += raw;
    if (total > maxBytes) throw new ClickHouseHttpError(1000, 'Query is too large');
    const body = data.subarray(i + 16, i + 16 + size);
    const [lo, hi] = cityHash128(body);
    if (data.readBigUInt64LE(i) !== lo || data.readBigUInt64LE(i + 8) !== hi)
      throw new ClickHouseHttpError(40, "Checksum doesn't match: corrupted data in the request body");
    const payload = body.subarray(HEADER);
    if (method === LZ4) parts.push(lz4Decode(payload, raw));
    else if (method === NONE && payload.length === raw) parts.push(payload);
    else
      throw new ClickHouseHttpError(
        271,
        `Unknown compression method 0x${(method ?? 0).toString(16)} in the request body`,
      );
    i += 16 + size;
  }
  return Buffer.concat(parts);
}
