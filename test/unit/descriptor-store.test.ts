/**
 * Every family's descriptor against its raw table in chDB after all migrations: each column
 * the descriptor writes exists (with `ver` for versioned families), and each table column
 * without a default is written, so a field added to the `.avsc` and the descriptor but not
 * to the SQL (or the other way round) fails here with its name. Rows built by the
 * descriptor are then inserted and read back, column for column.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { FAMILIES, type FamilyName } from '../../schemas/families.ts';
import { createStore, type Store } from '../../store/client.ts';
import { TsvLines } from '../../store/tsv.ts';
import { toRow } from '../../streams/rows.ts';
import { listMigrations, migrate } from '../../views/migrate.ts';
import { renderStatements } from '../../views/render.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-descriptor-'));
let store: Store;
let db: string;
interface Column {
  table: string;
  name: string;
  default_kind: string;
}
const columns = new Map<string, Column[]>();

beforeAll(async () => {
  const config = parseConfig({ dataDir: join(dir, 'data') });
  store = await createStore(config);
  db = config.store.database;
  await migrate(store, { database: db, cluster: config.store.cluster });
  const rows = await store.query<Column>(
    `SELECT table, name, default_kind FROM system.columns WHERE database = '${db}' ORDER BY table, position`,
  );
  for (const c of rows) columns.set(c.table, [...(columns.get(c.table) ?? []), c]);
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const names = Object.keys(FAMILIES) as FamilyName[];

describe('family descriptors against the raw tables (chDB, all migrations applied)', () => {
  it.each(names)('%s: the table has every column the descriptor writes, and no unwritten one', (family) => {
    const d = FAMILIES[family];
    const table = columns.get(d.table);
    expect(table, `no table ${d.table} for family ${family}`).toBeDefined();
    const written = [...d.columns, ...(d.versioned ? ['ver'] : [])];
    const have = new Set(table!.map((c) => c.name));
    const missing = written.filter((c) => !have.has(c));
    expect(missing, `${family}: columns the descriptor writes that ${d.table} lacks`).toEqual([]);
    const unwritten = table!
      .filter((c) => c.default_kind === '' && !written.includes(c.name))
      .map((c) => c.name);
    expect(unwritten, `${family}: columns of ${d.table} without a default that no field writes`).toEqual([]);
  });
});

const hash = `0x${'Ab'.repeat(32)}`;
const addr = `0x${'Cd'.repeat(20)}`;
const chain = {
  chainId: 98866,
  blockNumber: 12,
  blockHash: hash,
  blockTimestamp: 1_767_225_600,
  txHash: hash,
  logIndex: 3,
  removed: false,
  vault: 'nest-alpha',
};
const transfer = { ...chain, token: addr, from: addr, to: addr, amount: String((1n << 255n) - 1n) };

describe('rows the descriptor builds land in their table', () => {
  it('a transfer, column for column', async () => {
    const rec = FAMILIES.transfers.schema.parse(transfer);
    const row = toRow('transfers', rec);
    row.ver = 7;
    const lines = new TsvLines();
    const cols = Object.keys(row);
    lines.row(row, cols);
    await store.insertTsv(FAMILIES.transfers.table, cols, lines.finish().tsv);
    const [got] = await store.query<Record<string, unknown>>(
      `SELECT ${cols.map((c) => `toString(${c}) AS ${c}`).join(', ')} FROM ${db}.${FAMILIES.transfers.table}`,
    );
    const expected = Object.fromEntries(
      cols.map((c) => [c, c === 'block_time' ? '2026-01-01 00:00:00' : String(row[c])]),
    );
    expect(got).toEqual(expected);
  });
});

describe('a column added by a migration', () => {
  it('goes to the local tables first in cluster mode, then to the Distributed table', () => {
    const sql = listMigrations()
      .filter((m) => /\bADD COLUMN\b/.test(m.sql))
      .map((m) => m.sql)
      .join('\n');
    const out = renderStatements(sql, { database: 'vs', cluster: 'c1' });
    const adds = out.filter((s) => s.startsWith('ALTER TABLE vs.transfers_raw'));
    expect(adds.map((s) => s.split('\n')[0].trim())).toEqual([
      'ALTER TABLE vs.transfers_raw_local ON CLUSTER c1',
      'ALTER TABLE vs.transfers_raw ON CLUSTER c1',
    ]);
    expect(adds.every((s) => /ADD COLUMN IF NOT EXISTS transaction_index Int32/.test(s))).toBe(true);
  });
});
