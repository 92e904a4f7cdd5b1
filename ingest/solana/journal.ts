/**
 * The Solana follower's durable state: a base (every token account at one cursor, written once
 * per generation) and a journal of what changed after it, one line per round (the accounts it
 * set, the new cursor, the records it publishes). A round costs one appended line and one fsync,
 * whatever the number of holders; a restart loads the base and replays the lines. Once the
 * journal outgrows a tenth of the base, the state is written as the next generation's base
 * (amortised, a change still costs a constant).
 *
 * Files, under `<dataDir>/ingest/`: `solana-<name>.json` (the small checkpoint: mint, phase,
 * generation, cursor of the base), and in `solana-<name>/`: `base-<g>.txt` (`pubkey owner
 * amount slot` per line), `journal-<g>.jsonl`, and during the opening `history-<g>.json`.
 * A line is durable once its fsync returns; a line cut short by a crash is dropped at load (it
 * was never acted on: its records are published only after the fsync).
 */
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { open, readdir, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TransferRecord } from '../../schemas/records.ts';
import { type CheckpointFile, checkpointFile } from '../checkpoint.ts';
import type { MintTx } from './balances.ts';
import { MintState } from './state.ts';

/** Where the follower stands: every change up to `slot` is applied; `signature` the newest of the mint's handled. */
export interface Cursor {
  slot: number;
  signature?: string;
}

/** The small checkpoint naming the current generation. */
export interface JournalMeta {
  mint: string;
  generation: number;
  /** `opening`: the opening read is saved but not all published yet. */
  phase: 'opening' | 'following';
  /** The base's cursor. */
  base: Cursor;
  /** The opening read's slot and block time (the state's first slot). */
  openingSlot: number;
  openingTime: number;
}

/** One round's line. */
export interface JournalLine {
  cursor: Cursor;
  /** Accounts set: pubkey, owner, raw amount (null: gone), slot of the change. */
  set: [string, string, string | null, number][];
  /** Published once the line is durable; published again after a restart (same identities). */
  records?: TransferRecord[];
}

/** What a load gives back. */
export interface Loaded {
  meta: JournalMeta;
  state: MintState;
  cursor: Cursor;
  /** The last line's records: maybe not published before the process stopped. */
  unpublished: TransferRecord[];
  /** The opening's past transactions (phase `opening` only). */
  history: MintTx[];
}

type HistoryJson = (Omit<MintTx, 'changes'> & {
  changes: [string, string, string | null, string | null][];
})[];

export class Journal {
  private readonly dir: string;
  private readonly meta: CheckpointFile<JournalMeta>;
  private current?: JournalMeta;
  private lines = 0;
  private baseSize = 0;

  constructor(dataDir: string, name: string) {
    this.dir = join(dataDir, 'ingest', `solana-${name}`);
    this.meta = checkpointFile<JournalMeta>(dataDir, `solana-${name}`);
  }

  private file(kind: 'base' | 'journal' | 'history', g: number): string {
    return join(this.dir, `${kind}-${g}.${kind === 'base' ? 'txt' : kind === 'journal' ? 'jsonl' : 'json'}`);
  }

  /** The checkpoint as saved (a journal's, or one from before the journal: ingest/solana/legacy.ts). */
  saved(): unknown {
    return this.meta.load();
  }

  /** The saved state of `mint`, or undefined (none, or another mint's: the registry changed). */
  async load(mint: string): Promise<Loaded | undefined> {
    const meta = this.meta.load() as JournalMeta | undefined;
    if (!meta || meta.mint !== mint || !('generation' in meta)) return undefined;
    const g = meta.generation;
    const state = new MintState(mint, meta.base.slot);
    const lines = createInterface({ input: createReadStream(this.file('base', g)), crlfDelay: Infinity });
    for await (const l of lines) {
      if (!l) continue;
      const [pubkey, owner, amount, slot] = l.split(' ');
      state.set(pubkey, owner, BigInt(amount), Number(slot));
    }
    this.baseSize = state.size;
    let cursor = meta.base;
    let unpublished: TransferRecord[] = [];
    const journal = this.file('journal', g);
    let good = 0;
    let n = 0;
    if (existsSync(journal)) {
      const text = readFileSync(journal, 'utf8');
      for (const l of text.split('\n')) {
        if (!l) break;
        let line: JournalLine;
        try {
          line = JSON.parse(l);
        } catch {
          break; // cut short by a crash: never acted on
        }
        for (const [pubkey, owner, amount, slot] of line.set)
          state.set(pubkey, owner, amount === null ? undefined : BigInt(amount), slot);
        cursor = line.cursor;
        unpublished = line.records ?? [];
        good += Buffer.byteLength(l) + 1;
        n++;
      }
      if (good < Buffer.byteLength(text)) await truncate(journal, good);
    }
    this.lines = n;
    state.slot = cursor.slot;
    this.current = meta;
    const history = meta.phase === 'opening' ? readHistory(this.file('history', g)) : [];
    return { meta, state, cursor, unpublished, history };
  }

  /**
   * Saves `state` as the base of a new generation (and the opening's `history`), then the
   * checkpoint naming it: until that rename the previous generation stands.
   */
  async begin(
    state: MintState,
    meta: Omit<JournalMeta, 'generation' | 'mint'>,
    history: MintTx[] = [],
  ): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const g = (this.current?.generation ?? this.meta.load()?.generation ?? 0) + 1;
    await writeBase(this.file('base', g), state);
    if (history.length) await writeDurably(this.file('history', g), JSON.stringify(historyJson(history)));
    await writeFile(this.file('journal', g), '');
    const next: JournalMeta = { ...meta, mint: state.mint, generation: g };
    await this.meta.saveAsync(next);
    this.current = next;
    this.lines = 0;
    this.baseSize = state.size;
    await this.dropOtherGenerations(g);
  }

  /** The opening is all published: phase `following` (the history is no longer needed). */
  async opened(): Promise<void> {
    const meta = this.current as JournalMeta;
    this.current = { ...meta, phase: 'following' };
    await this.meta.saveAsync(this.current);
    await rm(this.file('history', meta.generation), { force: true });
  }

  /** Appends `line`, durable once this resolves. */
  async append(line: JournalLine): Promise<void> {
    const g = (this.current as JournalMeta).generation;
    const fh = await open(this.file('journal', g), 'a');
    try {
      await fh.write(`${JSON.stringify(line)}\n`);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    this.lines++;
  }

  /** Whether the journal has grown past a tenth of the base (then `begin` a new generation). */
  get due(): boolean {
    return this.lines > Math.max(1000, this.baseSize / 10);
  }

  get generation(): JournalMeta | undefined {
    return this.current;
  }

  private async dropOtherGenerations(keep: number): Promise<void> {
    for (const f of await readdir(this.dir)) {
      const m = /^(base|journal|history)-(\d+)\./.exec(f);
      if (m && Number(m[2]) !== keep) await rm(join(this.dir, f), { force: true });
    }
  }
}

/** Writes `text` to `path` through a temporary file, fsync'd, renamed. */
async function writeDurably(path: string, text: string): Promise<void> {
  const fh = await open(`${path}.tmp`, 'w');
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(`${path}.tmp`, path);
}

/** Streams every account of `state` to `path` (temporary file, fsync, rename). */
async function writeBase(path: string, state: MintState): Promise<void> {
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp);
  const done = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  let chunk: string[] = [];
  for (const a of state.entries()) {
    chunk.push(`${a.pubkey} ${a.owner} ${a.amount} ${a.slot}\n`);
    if (chunk.length >= 10_000) {
      if (!out.write(chunk.join(''))) await new Promise((r) => out.once('drain', r));
      chunk = [];
    }
  }
  out.end(chunk.join(''));
  await done;
  const fh = await open(tmp, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

const str = (v: bigint | undefined) => (v === undefined ? null : v.toString());
const big = (v: string | null) => (v === null ? undefined : BigInt(v));

function historyJson(txs: MintTx[]): HistoryJson {
  return txs.map((t) => ({
    ...t,
    changes: t.changes.map((c) => [c.pubkey, c.owner, str(c.pre), str(c.post)]),
  }));
}

function readHistory(path: string): MintTx[] {
  if (!existsSync(path)) return [];
  return (JSON.parse(readFileSync(path, 'utf8')) as HistoryJson).map((t) => ({
    ...t,
    changes: t.changes.map(([pubkey, owner, pre, post]) => ({
      pubkey,
      owner,
      pre: big(pre),
      post: big(post),
    })),
  }));
}

/** A journal line's `set` entry of an account as `state` holds it now. */
export function setEntry(state: MintState, pubkey: string): JournalLine['set'][number] {
  const a = state.get(pubkey);
  return [pubkey, a?.owner ?? '', a ? a.amount.toString() : null, a?.slot ?? state.slot];
}
