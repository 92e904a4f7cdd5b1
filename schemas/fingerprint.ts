/**
 * CRC-64-AVRO (Rabin) fingerprint of a schema's Parsing Canonical Form, as the
 * Avro specification defines it for single-object encoding.
 */
const EMPTY = 0xc15d213aa4d7a795n;
const MASK = (1n << 64n) - 1n;

const TABLE: bigint[] = (() => {
  const t: bigint[] = [];
  for (let i = 0; i < 256; i++) {
    let fp = BigInt(i);
    for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n) & MASK);
    t.push(fp & MASK);
  }
  return t;
})();

/** The 64-bit fingerprint of `canonical` (UTF-8). */
export function rabinFingerprint(canonical: string): bigint {
  let fp = EMPTY;
  for (const b of Buffer.from(canonical, 'utf8')) fp = (fp >> 8n) ^ TABLE[Number((fp ^ BigInt(b)) & 0xffn)];
  return fp & MASK;
}

/** The fingerprint as the 8 little-endian bytes single-object encoding puts after `C3 01`. */
export function fingerprintBytes(canonical: string): Buffer {
  const buf = Buffer.alloc(8);
  buf.writeBigUInt64LE(rabinFingerprint(canonical));
  return buf;
}
