/**
 * The settled tables (docs/architecture.md#precomputed-metrics): each written from one SQL file,
 * `views/settle/<table>.sql` (metrics_vault_daily from two), a SELECT of the table's rows for the
 * dirty vaults from their first dirty day on, with `{vaults:Array(String)}` and
 * `{froms:Array(Date)}` bound by the engine; and the inputs whose change makes a vault dirty for
 * it. views/settle.ts writes them in this order.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VaultstreamError } from '../core/errors.ts';
import { literal } from '../store/tsv.ts';
import { renderStatements } from './render.ts';

export const SETTLE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'settle');

/**
 * What made a vault's rows dirty: a raw family ingested since the last settle, a new UTC day, a
 * new UTC hour (only the holder counts, sampled hourly, read it), or (head only) a vault
 * watermark that differs from the head's. views/settle/loop/dirty.sql finds them.
 */
export type Input =
  | 'rates'
  | 'transfers'
  | 'redemptions'
  | 'snapshots'
  | 'registry'
  | 'day'
  | 'hour'
  | 'activity'
  | 'watermarks';
/** The inputs of the daily metrics (every input but hour, activity and watermarks). */
const ALL: Input[] = ['rates', 'transfers', 'redemptions', 'snapshots', 'registry', 'day'];
/** The inputs of the composition views (composition_daily, composition_apy_daily). */
const COMPOSITION: Input[] = ['snapshots', 'registry', 'day'];

/** One write of a settled table: its file and the inputs that make a vault dirty for it. */
export interface Target {
  table: string;
  /** `views/settle/<file>.sql`: the rows, by the table's column names (any other is ignored). */
  file: string;
  /** The vaults to write are those with one of these dirty, each from its first dirty day. */
  inputs: readonly Input[];
  /**
   * The column of a row's UTC day (a Date, or a DateTime whose UTC day it is): the stored rows
   * of a vault from its first dirty day on are replaced. Without it, all of the vault's rows.
   */
  day?: string;
}

/**
 * In the order written. metrics_vault_daily takes two writes: its compositionApy first, only
 * for the vaults whose composition inputs changed (the composition views are most of a
 * settle's time to plan, even for no vault), then its other columns from that stored
 * compositionApy. metrics_holder_since precedes metrics_top_holders, and the head comes last:
 * each reads the tables written before it in the same settle.
 */
export const TARGETS: readonly Target[] = [
  {
    table: 'metrics_chain_daily',
    file: 'metrics_chain_daily',
    inputs: ['rates', 'registry', 'day'],
    day: 'day',
  },
  {
    table: 'metrics_vault_daily',
    file: 'metrics_vault_daily.composition',
    inputs: COMPOSITION,
    day: 'day',
  },
  { table: 'metrics_vault_daily', file: 'metrics_vault_daily', inputs: ALL, day: 'day' },
  { table: 'metrics_assets_daily', file: 'metrics_assets_daily', inputs: COMPOSITION, day: 'day' },
  {
    table: 'metrics_vault_current',
    file: 'metrics_vault_current',
    inputs: ['rates', 'transfers', 'registry'],
  },
  {
    table: 'metrics_holders_daily',
    file: 'metrics_holders_daily',
    inputs: ['transfers', 'day', 'hour'],
    day: 'day',
  },
  { table: 'metrics_holder_since', file: 'metrics_holder_since', inputs: ['transfers'], day: 'since' },
  { table: 'metrics_top_holders', file: 'metrics_top_holders', inputs: ['transfers', 'registry'] },
  {
    table: 'metrics_pending_redemptions',
    file: 'metrics_pending_redemptions',
    inputs: ['redemptions', 'rates', 'registry'],
  },
  { table: 'metrics_volume', file: 'metrics_volume', inputs: ['activity'], day: 'block_time' },
  { table: 'metrics_vault_head', file: 'metrics_vault_head', inputs: [...ALL, 'watermarks'] },
];

/** The files read so far, by name (they are part of the code: read once). */
const texts = new Map<string, string>();

/**
 * `views/settle/<name>.sql` for the database `db`: its one statement, with `{{db}}` (and `vars`,
 * for loop/write.sql) rendered by the migrations' renderer (views/render.ts), the only text put
 * in: values are bound by the engine.
 */
export function settleSql(name: string, db: string, vars?: Readonly<Record<string, string>>): string {
  let text = texts.get(name);
  if (text === undefined) {
    text = readFileSync(join(SETTLE_DIR, `${name}.sql`), 'utf8');
    texts.set(name, text);
  }
  const stmts = renderStatements(text, { database: db, cluster: '', vars });
  if (stmts.length !== 1)
    throw new VaultstreamError(
      'INTERNAL',
      `views/settle/${name}.sql must hold one statement, not ${stmts.length}`,
    );
  return stmts[0];
}

/** Vault -> its first dirty UTC day (YYYY-MM-DD). */
export type FromDays = ReadonlyMap<string, string>;

/** Column names the write takes from the engine as they are: plain identifiers. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The INSERT that writes `t` (views/settle/loop/write.sql) and its parameters: the rows of the
 * vaults of `from` at `version` + 1, the tombstones of the rows they replace at `version`.
 * `columns` are the table's own (views/settle/loop/columns.sql); a table without a `day` is
 * rewritten whole for each vault (every from bound as the epoch).
 */
export function writeQuery(
  t: Target,
  db: string,
  columns: readonly string[],
  from: FromDays,
  version: bigint,
): { sql: string; params: Record<string, string> } {
  const bad = [...columns, t.day ?? ''].find((c) => c !== '' && !IDENTIFIER.test(c));
  if (bad !== undefined || columns.length === 0)
    throw new VaultstreamError(
      'INTERNAL',
      `${t.table} has no columns the settle can write (${bad ?? 'none'})`,
    );
  const sql = settleSql('loop/write', db, {
    table: t.table,
    columns: columns.map((c) => `\`${c}\``).join(', '),
    rows: settleSql(t.file, db),
    day: t.day === undefined ? '0' : `\`${t.day}\``,
  });
  const froms = t.day === undefined ? [...from.keys()].map(() => '1970-01-01') : [...from.values()];
  // As the engine binds them: `param_<name>` text.
  return {
    sql,
    params: { vaults: literal([...from.keys()]), froms: literal(froms), version: String(version) },
  };
}
