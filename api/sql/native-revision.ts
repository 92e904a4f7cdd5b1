/**
 * The Native format as a client of a given protocol revision reads it. ClickHouse's HTTP
 * interface writes Native for the `client_protocol_version` the client sends: from revision 1
 * each block starts with its block info, and from 54454 each column has a "custom
 * serialization" byte after its type. The embedded engine takes that version only from a server
 * context (no setting reaches its Native writer), so it writes revision 0, and clickhouse-go v2
 * (Grafana's data source, which sends 54460) fails with "read str: unexpected EOF". This module
 * rewrites the engine's revision-0 answer: it walks each column's data by its type to find where
 * the next column starts, and adds the block info and the byte (0: dense, the only
 * serialization revision 0 writes).
 */
import { ClickHouseHttpError } from './protocol.ts';

const WITH_BLOCK_INFO = 1;
const WITH_CUSTOM_SERIALIZATION = 54454;
/** is_overflows = false (field 1), bucket_num = -1 (field 2), end of fields. */
const BLOCK_INFO = Buffer.from([1, 0, 2, 0xff, 0xff, 0xff, 0xff, 0]);

const FIXED: Record<string, number> = {
  UInt8: 1,
  Int8: 1,
  Bool: 1,
  Nothing: 1,
  UInt16: 2,
  Int16: 2,
  Date: 2,
  UInt32: 4,
  Int32: 4,
  Float32: 4,
  Date32: 4,
  DateTime: 4,
  IPv4: 4,
  Decimal32: 4,
  BFloat16: 2,
  UInt64: 8,
  Int64: 8,
  Float64: 8,
  DateTime64: 8,
  Decimal64: 8,
  UInt128: 16,
  Int128: 16,
  UUID: 16,
  IPv6: 16,
  Decimal128: 16,
  UInt256: 32,
  Int256: 32,
  Decimal256: 32,
  Enum8: 1,
  Enum16: 2,
};

const unsupported = (type: string) =>
  new ClickHouseHttpError(
    48,
    `Native for client_protocol_version >= 1 is not implemented here for type ${type.slice(0, 100)}: use RowBinaryWithNamesAndTypes or JSON, or no client_protocol_version`,
  );

interface Type {
  name: string;
  args: string[];
}

/** `Name(arg, arg)` split at top-level commas (quotes and nested parentheses kept). */
function parseType(text: string): Type {
  const t = text.trim();
  const open = t.indexOf('(');
  if (open < 0 || !t.endsWith(')')) return { name: t, args: [] };
  const args: string[] = [];
  let depth = 0;
  let quote = false;
  let start = open + 1;
  for (let i = start; i < t.length - 1; i++) {
    const c = t[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === "'") quote = false;
    } else if (c === "'") quote = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      args.push(t.slice(start, i).trim());
      start = i + 1;
    }
  }
  args.push(t.slice(start, t.length - 1).trim());
  return { name: t.slice(0, open), args };
}

/** A named tuple element `name Type` -> `Type`. */
function elementType(arg: string): string {
  const m = /^[A-Za-z_][A-Za-z0-9_]*\s+(.*)$/s.exec(arg);
  return m && /^[A-Z]/.test(m[1] as string) ? (m[1] as string) : arg;
}

class Reader {
  i = 0;
  constructor(readonly b: Buffer) {}
  need(n: number): void {
    if (this.i + n > this.b.length) throw new ClickHouseHttpError(1001, 'Native answer ends inside a column');
  }
  skip(n: number): void {
    this.need(n);
    this.i += n;
  }
  varint(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      this.need(1);
      const byte = this.b[this.i++] as number;
      v += (byte & 0x7f) * mul;
      if (byte < 0x80) return v;
      mul *= 128;
    }
  }
  u64(): number {
    this.need(8);
    const v = this.b.readBigUInt64LE(this.i);
    this.i += 8;
    return Number(v);
  }
  str(): string {
    const n = this.varint();
    this.need(n);
    const s = this.b.toString('utf8', this.i, this.i + n);
    this.i += n;
    return s;
  }
}

/** The serialization state prefix: written once per column before its data (LowCardinality's version). */
function skipPrefix(r: Reader, text: string): void {
  const t = parseType(text);
  switch (t.name) {
    case 'LowCardinality':
      r.skip(8);
      return;
    case 'Nullable':
    case 'Array':
      skipPrefix(r, t.args[0] as string);
      return;
    case 'SimpleAggregateFunction':
      skipPrefix(r, t.args[1] as string);
      return;
    case 'Map':
    case 'Tuple':
      for (const a of t.args) skipPrefix(r, elementType(a));
  }
}

function skipData(r: Reader, text: string, rows: number): void {
  const t = parseType(text);
  const fixed = FIXED[t.name];
  if (fixed !== undefined) {
    r.skip(fixed * rows);
    return;
  }
  switch (t.name) {
    case 'Decimal': {
      const p = Number(t.args[0]);
      r.skip((p <= 9 ? 4 : p <= 18 ? 8 : p <= 38 ? 16 : 32) * rows);
      return;
    }
    case 'FixedString':
      r.skip(Number(t.args[0]) * rows);
      return;
    case 'String':
      for (let k = 0; k < rows; k++) r.skip(r.varint());
      return;
    case 'Nullable':
      r.skip(rows);
      skipData(r, t.args[0] as string, rows);
      return;
    case 'SimpleAggregateFunction':
      skipData(r, t.args[1] as string, rows);
      return;
    case 'Array':
    case 'Map': {
      let total = 0;
      for (let k = 0; k < rows; k++) total = r.u64();
      if (t.name === 'Array') {
        skipData(r, t.args[0] as string, total);
        return;
      }
      for (const a of t.args) skipData(r, a, total);
      return;
    }
    case 'Tuple':
      for (const a of t.args) skipData(r, elementType(a), rows);
      return;
    case 'LowCardinality': {
      const inner = parseType(t.args[0] as string);
      const keys = inner.name === 'Nullable' ? (inner.args[0] as string) : (t.args[0] as string);
      for (let done = 0; done < rows; ) {
        const flags = r.u64();
        // Native never uses a global dictionary (bit 8); additional keys (bit 9) come with every block.
        if (flags & 0x100) throw unsupported(text);
        if (flags & 0x200) skipData(r, keys, r.u64());
        const n = r.u64();
        r.skip(n * [1, 2, 4, 8][flags & 0xff]!);
        done += n;
      }
      return;
    }
  }
  throw unsupported(text);
}

/** The engine's revision-0 Native answer as a client of `revision` reads it. */
export function nativeForRevision(data: Buffer, revision: number): Buffer {
  if (!(revision >= WITH_BLOCK_INFO)) return data;
  const flag = revision >= WITH_CUSTOM_SERIALIZATION;
  const r = new Reader(data);
  const parts: Buffer[] = [];
  let from = 0;
  while (r.i < data.length) {
    parts.push(BLOCK_INFO);
    const cols = r.varint();
    const rows = r.varint();
    for (let c = 0; c < cols; c++) {
      r.str();
      const type = r.str();
      if (flag) {
        parts.push(data.subarray(from, r.i), Buffer.from([0]));
        from = r.i;
      }
      if (rows > 0) {
        skipPrefix(r, type);
        skipData(r, type, rows);
      }
    }
    parts.push(data.subarray(from, r.i));
    from = r.i;
  }
  return Buffer.concat(parts);
}
