/**
 * TabSeparated encoding of rows for inserts: ClickHouse parses it faster than any JSON
 * format. Values: numbers and bigints as digits, strings escaped (backslash, tab,
 * newline, carriage return, NUL), null as \N, arrays and maps as ClickHouse literals
 * whose quoted strings use the same backslash escapes (plus \'), as the TSV format reads
 * nested values in place.
 */
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };
const NEEDS_ESCAPE = /[\\\t\n\r\0]/;
const ESCAPE_ALL = /[\\\t\n\r\0]/g;

function escapeTsv(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(ESCAPE_ALL, (c) => ESCAPES[c]) : s;
}

/** A value as a ClickHouse literal (inside arrays and maps; also the store's setting values). */
export function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (Array.isArray(v)) return `[${v.map(literal).join(',')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${literal(k)}:${literal(x)}`)
      .join(',')}}`;
  return `'${escapeTsv(String(v)).replaceAll("'", "\\'")}'`;
}

function field(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  switch (typeof v) {
    case 'string':
      return escapeTsv(v);
    case 'number':
    case 'bigint':
      return String(v);
    case 'boolean':
      return v ? '1' : '0';
    default:
      return literal(v);
  }
}

/** Encodes `rows` (objects with the given columns) as TabSeparated text. */
export function toTsv(rows: Record<string, unknown>[], columns: readonly string[]): string {
  const out: string[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    let line = field(r[columns[0]]);
    for (let c = 1; c < columns.length; c++) line += `\t${field(r[columns[c]])}`;
    out[i] = line;
  }
  return `${out.join('\n')}\n`;
}

// ---- Byte encoder: the same text as `Buffer.from(toTsv(rows, columns))`, written field by
// field into one buffer. Building the text first costs a cons-string flattening plus a second
// copy; native Buffer writes cost ~100-250 ns a call, so short strings are copied char by char.

/** Node's per-encoding writers: `buf.write(s, off, enc)` adds an argument and encoding lookup. */
interface RawBuffer extends Buffer {
  latin1Write(s: string, offset: number): number;
  utf8Write(s: string, offset: number): number;
}

/** For each ASCII code: the letter after the backslash in its escape (from ESCAPES), else 0. */
const ESCAPE_LETTER = new Uint8Array(128);
for (const [c, e] of Object.entries(ESCAPES)) ESCAPE_LETTER[c.charCodeAt(0)] = e.charCodeAt(1);
/** Strings that `latin1Write` can copy as they are: ASCII with nothing to escape. */
const PLAIN_ASCII = /^[^\\\t\n\r\0\u0080-\uffff]*$/;
/** Above this length one native write beats the char loop (measured on 16-1024 char strings). */
const SHORT = 32;
const TAB = 9;
const NEWLINE = 10;

/**
 * Reused across calls so that large batches do not fault in fresh pages: callers get a copy,
 * as `Store.insert` encodes a batch before queueing it behind earlier inserts.
 */
let scratch = Buffer.allocUnsafeSlow(1 << 16) as RawBuffer;

/** The scratch buffer with room for `n` more bytes at `off`, grown geometrically if needed. */
function reserve(off: number, n: number): RawBuffer {
  if (off + n > scratch.length) {
    const grown = Buffer.allocUnsafeSlow(Math.max(2 * scratch.length, off + n)) as RawBuffer;
    scratch.copy(grown, 0, 0, off);
    scratch = grown;
  }
  return scratch;
}

/** Writes an ASCII string with no escapes (digits, `\N`); returns the offset after it. */
function writeAscii(s: string, off: number): number {
  const b = reserve(off, s.length);
  for (let i = 0; i < s.length; i++) b[off + i] = s.charCodeAt(i);
  return off + s.length;
}

/** Writes a string escaped for TSV as UTF-8; returns the offset after it. */
function writeString(s: string, off: number): number {
  const n = s.length;
  // At most 3 bytes a UTF-16 unit: an escape takes 2, a surrogate pair 4 for its 2 units.
  const b = reserve(off, 3 * n);
  if (n > SHORT) {
    if (PLAIN_ASCII.test(s)) return off + b.latin1Write(s, off);
    return off + b.utf8Write(escapeTsv(s), off);
  }
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80 || ESCAPE_LETTER[c] !== 0) return writeEscapedUtf8(b, s, i, off + i);
    b[off + i] = c;
  }
  return off + n;
}

/**
 * Writes `s` from index `i` on, escaped, as UTF-8 (a lone surrogate as U+FFFD, as
 * `Buffer.from` does); returns the offset after it.
 */
function writeEscapedUtf8(b: Buffer, s: string, i: number, off: number): number {
  for (; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      const e = ESCAPE_LETTER[c];
      if (e !== 0) {
        b[off++] = 0x5c;
        c = e;
      }
      b[off++] = c;
    } else if (c < 0x800) {
      b[off++] = 0xc0 | (c >> 6);
      b[off++] = 0x80 | (c & 0x3f);
    } else {
      const next = s.charCodeAt(i + 1); // NaN past the end
      if (c >= 0xd800 && c < 0xdc00 && next >= 0xdc00 && next < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
        b[off++] = 0xf0 | (c >> 18);
        b[off++] = 0x80 | ((c >> 12) & 0x3f);
      } else {
        if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
        b[off++] = 0xe0 | (c >> 12);
      }
      b[off++] = 0x80 | ((c >> 6) & 0x3f);
      b[off++] = 0x80 | (c & 0x3f);
    }
  }
  return off;
}

/** Writes one value as `field` renders it; returns the offset after it. */
function writeField(v: unknown, off: number): number {
  if (v === null || v === undefined) return writeAscii('\\N', off);
  switch (typeof v) {
    case 'string':
      return writeString(v, off);
    case 'number':
    case 'bigint':
      return writeAscii(String(v), off);
    case 'boolean':
      return writeAscii(v ? '1' : '0', off);
    default: {
      // Arrays and maps are rare: their literal is already escaped, written as UTF-8.
      const s = literal(v);
      return off + reserve(off, 3 * s.length).utf8Write(s, off);
    }
  }
}

/** `Buffer.from(toTsv(rows, columns))`, byte for byte, without building the string. */
export function toTsvBuffer(rows: Record<string, unknown>[], columns: readonly string[]): Buffer {
  return toTsvLines(rows, columns).tsv;
}

/**
 * As `toTsvBuffer`, with the byte offset after each row's line (`ends[i]`): a run of rows
 * `[a, b)` is `tsv.subarray(a ? ends[a - 1] : 0, ends[b - 1])`, to insert without re-encoding.
 * The buffer owns its memory (no pool slice), so it can be transferred to another thread.
 */
export function toTsvLines(
  rows: Record<string, unknown>[],
  columns: readonly string[],
): { tsv: Buffer; ends: Uint32Array } {
  // As `toTsv`, whose joined lines end in one newline even when there are none.
  if (rows.length === 0) return { tsv: Buffer.from('\n'), ends: new Uint32Array(0) };
  const lines = new TsvLines();
  for (const r of rows) lines.row(r, columns);
  return lines.finish();
}

/**
 * TabSeparated lines written one by one, by `row` or by a caller that writes a line's bytes
 * itself (`room`, then `endLine`). The lines are built in the module's scratch buffer, so one
 * `TsvLines` at a time, written synchronously from creation to `finish`.
 */
export class TsvLines {
  /** Where the next byte goes. */
  off = 0;
  private ends: number[] = [];

  /** The buffer to write at `off`, with room for `n` more bytes (valid until the next call). */
  room(n: number): Buffer {
    return reserve(this.off, n);
  }

  /** Marks the end of a line the caller wrote (its newline included) up to `off`. */
  endLine(): void {
    this.ends.push(this.off);
  }

  /** Writes `r`'s values of `columns` as one line. */
  row(r: Record<string, unknown>, columns: readonly string[]): void {
    let off = writeField(r[columns[0]], this.off);
    for (let c = 1; c < columns.length; c++) {
      reserve(off, 1)[off++] = TAB;
      off = writeField(r[columns[c]], off);
    }
    reserve(off, 1)[off++] = NEWLINE;
    this.off = off;
    this.ends.push(off);
  }

  get count(): number {
    return this.ends.length;
  }

  /** The lines in a buffer of their own, and the offset after each. */
  finish(): { tsv: Buffer; ends: Uint32Array } {
    const tsv = Buffer.allocUnsafeSlow(this.off);
    scratch.copy(tsv, 0, 0, this.off);
    return { tsv, ends: Uint32Array.from(this.ends) };
  }
}
