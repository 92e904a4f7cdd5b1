/**
 * Snapshot tables: one data version of a query's result, written once into an internal
 * table and then read by many requests without recomputing it. The store layer owns
 * their whole life: it creates and fills them, counts their rows, drops them, and sweeps
 * the ones a dead process left behind. Callers (api/read) say what a snapshot holds (its
 * columns, sorting key and SELECT) and only ever read it.
 *
 * Names are `<prefix><16 hex digits>` with a prefix of `SNAPSHOT_PREFIXES`: docs/views.md
 * and views/catalogue.ts treat them as internal (not part of the documented schema).
 */
import { randomBytes } from 'node:crypto';
import { VaultstreamError } from '../core/errors.ts';
import type { Store } from './client.ts';
import { expectRows, isUInt } from './row-shape.ts';

/** Name prefixes of snapshot tables (docs/views.md: internal tables). */
export const SNAPSHOT_PREFIXES = ['token_holders_snapshot_'] as const;
export type SnapshotPrefix = (typeof SNAPSHOT_PREFIXES)[number];

/** Prefixes swept as stale: the snapshots, and the per-request scratch tables of older releases. */
const SWEPT_PREFIXES = [...SNAPSHOT_PREFIXES, 'scratch_token_holders_'];

export interface SnapshotSpec {
  prefix: SnapshotPrefix;
  /** Column definitions, in the order `select` produces them (`name Type COMMENT '...'`, comma-separated). */
  columns: string;
  /** The MergeTree sorting key (readers' range conditions should use it). */
  orderBy: string;
  /** The table's COMMENT. */
  comment: string;
  /** The rows: a SELECT whose `{name:Type}` parameters are bound from `params`. */
  select: string;
  params?: Record<string, unknown>;
  /** Settings of the filling INSERT (bound the engine's memory here). */
  settings?: Record<string, string | number>;
}

export interface SnapshotTable {
  /** Database-qualified name (for readers' FROM). */
  table: string;
  /** Name without the database. */
  name: string;
  /** Rows written. */
  rows: number;
  /** Drops the table (idempotent). */
  drop(): Promise<void>;
}

const SETTING = /^[a-z_]+$/;

function settingsClause(settings: Record<string, string | number> = {}): string {
  const parts = Object.entries(settings).map(([k, v]) => {
    if (!SETTING.test(k) || !(typeof v === 'number' ? Number.isFinite(v) : /^[\w.]+$/.test(v)))
      throw new VaultstreamError('BAD_INPUT', `snapshot setting ${k} = ${String(v)} is not a plain setting`);
    return `${k} = ${v}`;
  });
  return parts.length ? `SETTINGS ${parts.join(', ')}` : '';
}

/**
 * Creates a snapshot table and fills it with `spec.select` (one INSERT ... SELECT in the
 * engine: no row passes through this process). On failure the table is dropped and the
 * error is a STORE_QUERY_FAILED with the engine's error as its cause.
 */
export async function createSnapshot(store: Store, spec: SnapshotSpec): Promise<SnapshotTable> {
  if (!SNAPSHOT_PREFIXES.includes(spec.prefix))
    throw new VaultstreamError('BAD_INPUT', `not a snapshot table prefix: ${spec.prefix}`);
  const name = `${spec.prefix}${randomBytes(8).toString('hex')}`;
  const table = `${store.database}.${name}`;
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await store.command(`DROP TABLE IF EXISTS ${table} SYNC`);
  };
  const failed = (step: string, cause: unknown) =>
    new VaultstreamError('STORE_QUERY_FAILED', `snapshot ${name}: ${step} failed`, {
      cause,
      details: { table },
    });
  try {
    await store.command(
      `CREATE TABLE ${table} (${spec.columns}) ENGINE = MergeTree ORDER BY ${spec.orderBy}
       COMMENT ${quote(spec.comment)}`,
    );
  } catch (err) {
    throw failed('create', err);
  }
  try {
    // Through `query`, which binds parameters (`command` does not); it returns no rows.
    await store.query(`INSERT INTO ${table} ${spec.select} ${settingsClause(spec.settings)}`, spec.params);
    const counted = await store.query<{ n: string }>(`SELECT count() AS n FROM ${table}`);
    const [{ n }] = expectRows(`rows of ${table}`, counted, { n: isUInt });
    return { table, name, rows: Number(n), drop };
  } catch (err) {
    await drop().catch(() => undefined);
    throw failed('fill', err);
  }
}

function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Drops snapshot tables older than `olderThanSeconds` (default an hour), except `keep`
 * (names without database): left behind by a process that died. Live snapshots are
 * rebuilt well within the hour.
 */
export async function dropStaleSnapshots(
  store: Store,
  opts: { keep?: readonly string[]; olderThanSeconds?: number } = {},
): Promise<string[]> {
  const stale = await store.query<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = {db:String}
       AND arrayExists(p -> startsWith(name, p), {prefixes:Array(String)})
       AND NOT has({keep:Array(String)}, name)
       AND metadata_modification_time < now() - toIntervalSecond({age:UInt32})`,
    {
      db: store.database,
      prefixes: SWEPT_PREFIXES,
      keep: opts.keep ?? [],
      age: opts.olderThanSeconds ?? 3600,
    },
  );
  expectRows('stale snapshots', stale, {
    name: (v) => typeof v === 'string' && /^\w+$/.test(v) && SWEPT_PREFIXES.some((p) => v.startsWith(p)),
  });
  for (const { name } of stale) await store.command(`DROP TABLE IF EXISTS ${store.database}.${name} SYNC`);
  return stale.map((s) => s.name);
}
