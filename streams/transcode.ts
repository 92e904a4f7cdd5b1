/**
 * Records straight from Avro bytes to their TabSeparated line: the pipeline's hottest path
 * (transfers) without a JS object or string per field. A `Transcoder` is built from a
 * family's descriptor (schemas/families.ts, `transcode: true`) and the writer schema's
 * field order: it reads a body written with that schema, checks every field as its kind's
 * fast check does (schemas/kinds.ts `wire`), and writes exactly the line that `toRow` +
 * `TsvLines.row` would (lower-cased EVM hex, the event id, times as `unixTime` renders
 * them, `ver` last). Whatever it is not sure of (a value zod might reject or change, a
 * number past 2^53, trailing bytes) it declines, having written nothing, and the record
 * takes the general path. Tests hold the two paths to the same bytes
 * (test/unit/transcode.test.ts).
 */
import type avro from 'avsc';
import { VaultstreamError } from '../core/errors.ts';
import type { Out } from '../schemas/columns.ts';
import { FAMILIES, type FamilyName } from '../schemas/families.ts';
import { BASE58, DIGIT, HEX, SLUG, type Wire } from '../schemas/kinds.ts';
import type { TsvLines } from '../store/tsv.ts';

/** What the consumer needs of a transcoded event besides its line (state check, ranges). */
export interface Transcoded {
  eventId: string;
  removed: boolean;
  vault: string;
  chainId: number;
  blockNumber: number;
}

const DATETIME_MAX = 4_294_967_295;
const TAB = 9;
const NEWLINE = 10;
const COLON = 58;
const MINUS = 45;

/** One field as the transcoder reads it (in the writer's order) and writes it (at `slot`). */
interface Step {
  wire: Wire;
  out: Out | undefined;
  /** The field's place in the descriptor (column order). */
  slot: number;
}

/** Writes an integer (|n| < 2^53) in decimal; returns the offset after it. */
function writeInt(out: Buffer, off: number, n: number): number {
  if (n < 0) {
    out[off++] = MINUS;
    n = -n;
  }
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
 * A family's transcoder for one writer schema. Its read state (the body, the position, the
 * values read) lives in the instance, not in the module: instances do not share it.
 */
export class Transcoder {
  /** The line's columns, in order, then `ver`. */
  readonly columns: readonly string[];
  /** The fields in the writer's order (reading) and in the descriptor's (writing). */
  private readonly steps: Step[];
  private readonly bySlot: Step[];
  private readonly hashWire: Wire;
  /** Per descriptor field: the number read, or the string's start; `ends` the string's end. */
  private readonly vals: Float64Array;
  private readonly ends: Int32Array;
  private readonly at: {
    chainId: number;
    blockNumber: number;
    blockHash: number;
    logIndex: number;
    removed: number;
    vault: number;
  };
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  private end = 0;
  private failed = false;
  /** The string bytes of the record being read. */
  private room = 0;

  constructor(family: FamilyName, writerFields: readonly string[]) {
    const d = FAMILIES[family];
    if (!d.transcode || !d.event)
      throw new VaultstreamError('INTERNAL', `family ${family} has no transcoder`);
    const slotOf = new Map(d.fields.map((f, i) => [f.name, i]));
    if (writerFields.length !== d.fields.length || writerFields.some((n) => !slotOf.has(n)))
      throw new VaultstreamError('INTERNAL', `the ${family} writer schema's fields are not the descriptor's`);
    this.steps = writerFields.map((name) => {
      const slot = slotOf.get(name)!;
      const { wire, out } = d.fields[slot].kind;
      // The conversions written here: hex lower-cased (norm), times, flags as 0/1.
      const ok =
        wire !== undefined &&
        (wire.avro === 'string'
          ? wire.chars === 'hexOrBase58'
            ? out === 'norm'
            : out === undefined || out === 'norm'
          : wire.avro === 'boolean'
            ? out === 'flag'
            : out === undefined || out === 'time');
      if (!ok) throw new VaultstreamError('INTERNAL', `field ${family}.${name} cannot be transcoded`);
      return { wire, out, slot };
    });
    this.bySlot = [...this.steps].sort((a, b) => a.slot - b.slot);
    const slot = (name: string) => {
      const i = slotOf.get(name);
      if (i === undefined) throw new VaultstreamError('INTERNAL', `family ${family} has no field ${name}`);
      return i;
    };
    this.at = {
      chainId: slot('chainId'),
      blockNumber: slot('blockNumber'),
      blockHash: slot('blockHash'),
      logIndex: slot('logIndex'),
      removed: slot('removed'),
      vault: slot('vault'),
    };
    this.hashWire = this.bySlot[this.at.blockHash].wire;
    this.vals = new Float64Array(d.fields.length);
    this.ends = new Int32Array(d.fields.length);
    this.columns = [...d.columns, 'ver'];
    if (d.columns.length !== d.fields.length + 1)
      throw new VaultstreamError('INTERNAL', `family ${family} has derived columns`);
  }

  /** An Avro int or long (zig-zag varint) within ±2^53, else `failed`. */
  private readLong(): number {
    const buf = this.buf;
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.end) break;
      const b = buf[this.pos++];
      n += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        // n < 2^56: exact as a double up to 2^53; beyond, decline.
        if (n > Number.MAX_SAFE_INTEGER) break;
        return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      }
      scale *= 128;
    }
    this.failed = true;
    return 0;
  }

  /**
   * Copies bytes `[from, to)` to `out` at `off` if they pass the string's wire check,
   * lower-casing EVM hex as `norm` does; returns the offset after them, or -1. Checking
   * while copying reads each byte once.
   */
  private copyString(wire: Wire, out: Buffer, off: number, from: number, to: number): number {
    const buf = this.buf;
    if (wire.avro !== 'string') return -1;
    const table = wire.chars === 'slug' ? SLUG : wire.chars === 'uint' ? DIGIT : undefined;
    if (table === undefined) {
      const len = to - from;
      if (wire.chars !== 'hexOrBase58') return -1;
      if (buf[from] === 48) {
        if (len !== wire.digits + 2 || buf[from + 1] !== 120) return -1;
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
    for (let i = from; i < to; i++) {
      const c = buf[i];
      if (table[c] !== 1) return -1;
      out[off++] = c;
    }
    return off;
  }

  /** Reads every field (numbers and booleans checked, strings located); false to decline. */
  private read(): boolean {
    const { steps, vals, ends, buf } = this;
    let room = 0;
    for (let s = 0; s < steps.length; s++) {
      const { wire, slot } = steps[s];
      if (wire.avro === 'boolean') {
        if (this.pos >= this.end) return false;
        const b = buf[this.pos++];
        if (b > 1) return false;
        vals[slot] = b;
      } else if (wire.avro === 'string') {
        const len = this.readLong();
        if (this.failed || len < 0 || this.pos + len > this.end) return false;
        vals[slot] = this.pos;
        this.pos += len;
        ends[slot] = this.pos;
        room += len;
        // The checks of length and range; the characters are checked as they are copied.
        if (wire.chars === 'slug') {
          if (len === 0 || buf[this.pos - len] === 45) return false;
        } else if (wire.chars === 'uint') {
          const m = wire.max;
          const start = this.pos - len;
          if (len === 0 || len > m.length || (len > 1 && buf[start] === 48)) return false;
          if (len === m.length && buf.toString('latin1', start, this.pos) > m) return false;
        }
      } else {
        const n = this.readLong();
        if (this.failed || n < wire.min || n > wire.max) return false;
        vals[slot] = n;
      }
    }
    this.room = room;
    return this.pos === this.end;
  }

  /**
   * Reads the body `body[from, to)` (the writer schema this transcoder was built for) and
   * writes its line with `ver`; undefined, with nothing written, when the record must take
   * the general path.
   */
  line(body: Buffer, from: number, to: number, ver: number, lines: TsvLines): Transcoded | undefined {
    this.buf = body;
    this.pos = from;
    this.end = to;
    this.failed = false;
    if (!this.read()) return undefined;
    const { steps, bySlot, vals, ends, at } = this;
    // The line is written as the strings are checked: `lines.off` moves only once all passed, so a
    // record declined halfway leaves its bytes past the end, to be overwritten. Every byte written
    // is ASCII with nothing to escape; the line is at most this long.
    const out = lines.room(2 * this.room + 24 * (steps.length + 4));
    const start = lines.off;
    let off = writeInt(out, start, vals[at.chainId]);
    out[off++] = COLON;
    off = this.copyString(this.hashWire, out, off, vals[at.blockHash], ends[at.blockHash]);
    if (off < 0) return undefined;
    out[off++] = COLON;
    off = writeInt(out, off, vals[at.logIndex]);
    const idEnd = off;
    let vaultAt = 0;
    for (let slot = 0; slot < vals.length; slot++) {
      out[off++] = TAB;
      const { wire, out: conv } = bySlot[slot];
      if (wire.avro === 'string') {
        if (slot === at.vault) vaultAt = off;
        off = this.copyString(wire, out, off, vals[slot], ends[slot]);
        if (off < 0) return undefined;
      } else if (conv === 'time') {
        // As unixTime renders it: seconds, ten zero-padded digits below 10^9, the type's end past it.
        const t = Math.min(Math.max(vals[slot], 0), DATETIME_MAX);
        for (let x = Math.max(t, 1); x < 1_000_000_000; x *= 10) out[off++] = 48;
        off = writeInt(out, off, t);
      } else off = writeInt(out, off, vals[slot]);
    }
    out[off++] = TAB;
    off = writeInt(out, off, ver);
    out[off++] = NEWLINE;
    lines.off = off;
    lines.endLine();
    return {
      eventId: out.toString('latin1', start, idEnd),
      removed: vals[at.removed] === 1,
      vault: out.toString('latin1', vaultAt, vaultAt + ends[at.vault] - vals[at.vault]),
      chainId: vals[at.chainId],
      blockNumber: vals[at.blockNumber],
    };
  }
}

const cache = new WeakMap<avro.Type, Transcoder | null>();

/**
 * The transcoder of `family` for records written with `writer` (the family's newest schema),
 * or undefined when the family has none.
 */
export function transcoderFor(family: FamilyName, writer: avro.Type): Transcoder | undefined {
  if (!FAMILIES[family].transcode) return undefined;
  let t = cache.get(writer);
  if (t === undefined) {
    t = new Transcoder(
      family,
      (writer as avro.types.RecordType).fields.map((f) => f.name),
    );
    cache.set(writer, t);
  }
  return t ?? undefined;
}
