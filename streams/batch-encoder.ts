/**
 * A batch's way from bus bytes to TabSeparated rows, in two steps around the store's
 * state lookup (streams/dedup.ts):
 *   prepare: decode and validate every record (failures become dead letters), map each to
 *            its raw-table row, stamp `ver`, and say which block ranges to look up;
 *   encode:  drop the state changes already stored, and encode the rest as TabSeparated
 *            lines the processor inserts as they are (or in runs, when it bisects).
 * Both run on the calling thread (`InlineEncoder`, the default) or on worker threads
 * (`WorkerEncoder`, `streams.workers` > 0), which run these same functions
 * (streams/encode-worker.ts). Threads help where the main thread is the limit (it also
 * publishes, reads the bus and serves the API); on 2 cores the engine is, and the pipeline
 * benchmark measured the same throughput either way.
 */
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../core/errors.ts';
import type { EventCodec } from '../schemas/codec.ts';
import { FAMILIES, type FamilyName } from '../schemas/families.ts';
import { fastValid } from '../schemas/fast-valid.ts';
import { TsvLines } from '../store/tsv.ts';
import { type KeyRange, KeyRangeCollector, stateChangeIndexes } from './dedup.ts';
import { toRow } from './rows.ts';
import { transcoderFor } from './transcode.ts';

/** A batch's record values, laid end to end: record `i` is `data[i ? ends[i - 1] : 0, ends[i])`. */
export interface PackedValues {
  data: Uint8Array;
  ends: Uint32Array;
}

/** The values of a packed batch, as views of its buffer (no copy). */
export function unpackValues({ data, ends }: PackedValues): Buffer[] {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Array.from(ends, (end, i) => buf.subarray(i ? ends[i - 1] : 0, end));
}

/** Packs values into one buffer that another thread can take over without a copy. */
export function packValues(values: readonly Buffer[]): PackedValues {
  let total = 0;
  for (const v of values) total += v.length;
  const data = Buffer.allocUnsafeSlow(total);
  const ends = new Uint32Array(values.length);
  let off = 0;
  for (let i = 0; i < values.length; i++) {
    data.set(values[i], off);
    off += values[i].length;
    ends[i] = off;
  }
  return { data, ends };
}

export interface Prepared {
  /** Records that cannot be stored: their index in the batch and why. */
  dead: { index: number; reason: string }[];
  /** Block ranges whose stored states `encode` needs (families whose views sum deltas), else none. */
  ranges: KeyRange[];
}

export interface Encoded {
  /** Columns of the lines, in order. */
  columns: string[];
  /** TabSeparated lines of the rows to insert. */
  tsv: Uint8Array;
  /** Byte offset after each line. */
  lineEnds: Uint32Array;
  /** Index in the batch of the record each line came from. */
  source: Uint32Array;
  /** Valid records dropped as already stored in the same state. */
  skipped: number;
}

/** What `prepare` keeps for `encode`: every valid record's line, and its event's identity and state. */
interface Pending {
  columns: string[];
  tsv: Buffer;
  ends: Uint32Array;
  source: Uint32Array;
  /** For families whose views sum deltas: each line's event id, and 1 = the event, 0 = its retraction. */
  ids?: string[];
  live?: Uint8Array;
}

/**
 * Decodes, validates and encodes a batch's records. `firstVer` is the `ver` of record 0;
 * record `i` gets `firstVer + i` (gaps where records are dead do no harm: only the order counts).
 * Records of a family with a transcoder (transfers) in the newest schema go straight from Avro
 * to their line (streams/transcode.ts); every other record is decoded, checked (fastValid, else
 * zod) and mapped by `toRow`, as the family's descriptor says.
 */
export async function prepareRows(
  codec: EventCodec,
  family: FamilyName,
  values: readonly Buffer[],
  firstVer: number,
): Promise<Pending & Prepared> {
  const n = values.length;
  const value = (i: number) => values[i];
  // The only wait: schemas the registry has not sent yet. Fetched first, so that the lines
  // below are written in one synchronous pass (they share tsv.ts's scratch buffer).
  const unfetched = new Map<number, string>();
  for (let i = 0; i < n; i++) {
    if (!codec.needsFetch(value(i))) continue;
    await codec.decode(family, value(i)).catch((err) => {
      if (codec.needsFetch(value(i))) unfetched.set(i, errorMessage(err));
    });
  }
  const desc = FAMILIES[family];
  const schema = desc.schema;
  const versioned = desc.versioned;
  const checked = desc.stateChecked;
  const transcoder = transcoderFor(family, codec.latest(family).type);
  const lines = new TsvLines();
  const ranges = new KeyRangeCollector();
  const dead: Prepared['dead'] = [];
  const source: number[] = [];
  const ids: string[] = [];
  const live: number[] = [];
  let columns: readonly string[] | undefined;
  for (let i = 0; i < n; i++) {
    const ver = versioned ? firstVer + i : 0;
    if (transcoder) {
      const v = values[i];
      const at = codec.newestBodyStart(family, v);
      const t = at < 0 ? undefined : transcoder.line(v, at, v.length, ver, lines);
      if (t) {
        columns ??= transcoder.columns;
        source.push(i);
        if (checked) {
          ids.push(t.eventId);
          live.push(t.removed ? 0 : 1);
          ranges.add(t.vault, t.chainId, t.blockNumber);
        }
        continue;
      }
    }
    let reason = unfetched.get(i);
    if (reason === undefined) {
      try {
        const decoded = codec.decodeSync(family, value(i));
        if (!decoded) throw new Error('schema not fetched from the registry');
        const rec = decoded.value;
        // The hand-written checks accept only what zod accepts unchanged (schemas/fast-valid.ts):
        // half the cost, and no copy of the record. Anything else is zod's to accept or word.
        const parsed = fastValid(family, rec)
          ? { success: true as const, data: rec as never }
          : schema.safeParse(rec);
        if (parsed.success) {
          const row = toRow(family, parsed.data as never);
          if (versioned) row.ver = ver;
          columns ??= Object.keys(row);
          lines.row(row, columns);
          source.push(i);
          if (checked) {
            ids.push(row.event_id as string);
            live.push(row.removed === 0 ? 1 : 0);
            ranges.add(row.vault as string, row.chain_id as number, row.block_number as number);
          }
          continue;
        }
        reason = `invalid ${family} record: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`;
      } catch (err) {
        reason = errorMessage(err);
      }
    }
    dead.push({ index: i, reason });
  }
  const { tsv, ends } = lines.count
    ? lines.finish()
    : { tsv: Buffer.allocUnsafeSlow(0), ends: new Uint32Array(0) };
  return {
    columns: columns ? [...columns] : [],
    tsv,
    ends,
    source: Uint32Array.from(source),
    ...(checked ? { ids, live: Uint8Array.from(live) } : {}),
    dead,
    ranges: ranges.ranges,
  };
}

/** Drops the lines of events already stored in the same state (given the stored states). */
export function encodeRows(pending: Pending, stored: ReadonlyMap<string, boolean>): Encoded {
  const { columns, tsv, ends, source } = pending;
  const total = ends.length;
  if (!pending.ids || !pending.live) return { columns, tsv, lineEnds: ends, source, skipped: 0 };
  const keep = stateChangeIndexes(pending.ids, pending.live, stored);
  if (keep.length === total) return { columns, tsv, lineEnds: ends, source, skipped: 0 };
  let bytes = 0;
  for (const i of keep) bytes += ends[i] - (i ? ends[i - 1] : 0);
  const out = Buffer.allocUnsafeSlow(bytes);
  const outEnds = new Uint32Array(keep.length);
  const outSource = new Uint32Array(keep.length);
  let off = 0;
  keep.forEach((i, k) => {
    off += tsv.copy(out, off, i ? ends[i - 1] : 0, ends[i]);
    outEnds[k] = off;
    outSource[k] = source[i];
  });
  return { columns, tsv: out, lineEnds: outEnds, source: outSource, skipped: total - keep.length };
}

/** Runs `prepare` and `encode` for the processor; `encode` must follow each `prepare` once. */
export interface BatchEncoder {
  prepare(
    family: FamilyName,
    values: readonly Buffer[],
    firstVer: number,
  ): Promise<Prepared & { id: number }>;
  encode(id: number, stored: ReadonlyMap<string, boolean>): Promise<Encoded>;
  /** Forgets a prepared batch that will not be encoded (its store lookup failed). */
  drop(id: number): void;
  close(): Promise<void>;
}

/** Both steps on the calling thread. */
export class InlineEncoder implements BatchEncoder {
  private readonly pending = new Map<number, Pending>();
  private next = 0;

  constructor(private readonly codec: EventCodec) {}

  async prepare(family: FamilyName, values: readonly Buffer[], firstVer: number) {
    const id = this.next++;
    const { dead, ranges, ...pending } = await prepareRows(this.codec, family, values, firstVer);
    this.pending.set(id, pending);
    return { id, dead, ranges };
  }

  async encode(id: number, stored: ReadonlyMap<string, boolean>): Promise<Encoded> {
    const p = this.pending.get(id);
    if (!p) throw new Error(`no prepared batch ${id}`);
    this.pending.delete(id);
    return encodeRows(p, stored);
  }

  drop(id: number): void {
    this.pending.delete(id);
  }

  async close(): Promise<void> {
    this.pending.clear();
  }
}

/** Messages between the processor and its worker threads. */
export type WorkerRequest =
  | { op: 'prepare'; id: number; family: FamilyName; data: Uint8Array; ends: Uint32Array; firstVer: number }
  | { op: 'encode'; id: number; stored: [string, boolean][] }
  | { op: 'drop'; id: number };
export type WorkerReply =
  | { id: number; ok: true; result: Prepared | Encoded }
  | { id: number; ok: false; error: string };

/** What a worker needs to build the same codec as the processor's (cli/wiring.ts createCodec). */
export interface WorkerSetup {
  schemaRegistryUrl?: string;
  topicPrefix: string;
}

const WORKER_URL = new URL('./encode-worker.mjs', import.meta.url);

/**
 * Both steps on worker threads. A batch stays on the worker that prepared it (its rows never
 * cross threads); batches go to the workers in turn. A worker that dies fails the calls it
 * had in flight (the bus redelivers those batches) and is replaced.
 */
export class WorkerEncoder implements BatchEncoder {
  private readonly workers: (Worker | undefined)[];
  private readonly calls = new Map<
    number,
    { worker: number; resolve: (r: never) => void; reject: (e: Error) => void }
  >();
  /** The worker holding each prepared batch. */
  private readonly home = new Map<number, number>();
  private next = 0;

  constructor(
    private readonly setup: WorkerSetup,
    count: number,
  ) {
    this.workers = Array.from({ length: Math.max(1, count) }, () => undefined);
  }

  private worker(w: number): Worker {
    let worker = this.workers[w];
    if (worker) return worker;
    worker = new Worker(WORKER_URL, { workerData: this.setup });
    // An idle worker does not keep the process alive; calls in flight do (see `call`).
    worker.unref();
    worker.on('message', (reply: WorkerReply) => {
      const call = this.calls.get(reply.id);
      if (!call) return;
      this.calls.delete(reply.id);
      if (this.calls.size === 0) for (const x of this.workers) x?.unref();
      if (reply.ok) call.resolve(reply.result as never);
      else call.reject(new Error(reply.error));
    });
    const fail = (err: Error) => {
      if (this.workers[w] !== worker) return;
      this.workers[w] = undefined;
      for (const [id, call] of this.calls)
        if (call.worker === w) {
          this.calls.delete(id);
          call.reject(new Error(`batch encoder thread failed: ${err.message}`));
        }
      for (const [id, at] of this.home) if (at === w) this.home.delete(id);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exited with code ${code}`)));
    this.workers[w] = worker;
    return worker;
  }

  private call<T>(w: number, req: WorkerRequest, transfer: ArrayBuffer[] = []): Promise<T> {
    const worker = this.worker(w);
    worker.ref();
    return new Promise<T>((resolve, reject) => {
      this.calls.set(req.id, { worker: w, resolve: resolve as never, reject });
      worker.postMessage(req, transfer);
    });
  }

  async prepare(family: FamilyName, values: readonly Buffer[], firstVer: number) {
    const id = this.next++;
    const w = id % this.workers.length;
    const { data, ends } = packValues(values);
    this.home.set(id, w);
    try {
      const r = await this.call<Prepared>(w, { op: 'prepare', id, family, data, ends, firstVer }, [
        data.buffer as ArrayBuffer,
        ends.buffer as ArrayBuffer,
      ]);
      return { id, ...r };
    } catch (err) {
      this.home.delete(id);
      throw err;
    }
  }

  async encode(id: number, stored: ReadonlyMap<string, boolean>): Promise<Encoded> {
    const w = this.home.get(id);
    if (w === undefined) throw new Error(`no prepared batch ${id}`);
    this.home.delete(id);
    return this.call<Encoded>(w, { op: 'encode', id, stored: [...stored] });
  }

  drop(id: number): void {
    const w = this.home.get(id);
    this.home.delete(id);
    if (w !== undefined) this.workers[w]?.postMessage({ op: 'drop', id } satisfies WorkerRequest);
  }

  /** Stops the threads and fails the calls in flight; a later call starts new threads (a processor restarted). */
  async close(): Promise<void> {
    const workers = this.workers.filter((w): w is Worker => !!w);
    this.workers.fill(undefined);
    this.home.clear();
    for (const [id, call] of this.calls) {
      this.calls.delete(id);
      call.reject(new Error('batch encoder closed'));
    }
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
