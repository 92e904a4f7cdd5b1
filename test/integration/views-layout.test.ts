/**
 * One definition per view: the versioned migrations hold the tables and
 * materialized views, every plain view is one file of views/plain applied on every migrate.
 * A store migrated by the old layout (every view defined, and redefined, by numbered
 * migrations: main at 99bec57) migrates to exactly the schema of a fresh store, keeps its
 * ledger readable, and no comment cites a document the repo lacks.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { listMigrations, migrate } from '../../views/migrate.ts';
import { listPlainViews } from '../../views/plain.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** The last commit whose migrations defined the plain views (003 ... 017). */
const OLD_LAYOUT = '99bec57';
const dir = mkdtempSync(join(tmpdir(), 'vs-views-layout-'));

interface Schema {
  tables: string[];
  columns: string[];
}
async function schemaOf(store: Store): Promise<Schema> {
  const db = store.database;
  const tables = await store.query<{ s: string }>(
    `SELECT concat(name, ' ', engine, ' ', create_table_query, ' ', comment) AS s FROM system.tables
     WHERE database = {db:String} AND name != 'schema_migrations' ORDER BY name`,
    { db },
  );
  const columns = await store.query<{ s: string }>(
    `SELECT concat(table, '.', name, ' ', type, ' ', comment) AS s FROM system.columns
     WHERE database = {db:String} AND table != 'schema_migrations' ORDER BY table, position`,
    { db },
  );
  return {
    tables: tables.map((r) => r.s.replaceAll(`${db}.`, 'DB.')),
    columns: columns.map((r) => r.s),
  };
}

async function open(name: string): Promise<Store> {
  return createStore(parseConfig({ dataDir: join(dir, name) }));
}

let fresh: Schema;
let upgraded: Schema;
let ledger: { name: string; checksum: string }[];
let rerun: Awaited<ReturnType<typeof migrate>>;

beforeAll(async () => {
  const a = await open('fresh');
  await migrate(a, { database: a.database, cluster: '' });
  fresh = await schemaOf(a);
  await a.close();

  const old = join(dir, 'old');
  mkdirSync(old);
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive ${OLD_LAYOUT} views/migrations | tar -x -C "${old}"`]);
  const noViews = join(dir, 'no-plain-views');
  mkdirSync(noViews);
  const b = await open('upgraded');
  const first = await migrate(
    b,
    { database: b.database, cluster: '' },
    undefined,
    join(old, 'views', 'migrations'),
    noViews,
  );
  expect(first.applied).toContain('017_faster_vault_views.sql');
  await migrate(b, { database: b.database, cluster: '' });
  rerun = await migrate(b, { database: b.database, cluster: '' });
  upgraded = await schemaOf(b);
  ledger = await b.query(
    `SELECT name, argMax(checksum, applied_at) AS checksum FROM ${b.database}.schema_migrations GROUP BY name ORDER BY name`,
  );
  await b.close();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('plain views: one file each, applied on every migrate', () => {
  it('an old-layout store migrates to exactly the schema of a fresh one (views, columns, comments)', () => {
    expect(upgraded.tables).toEqual(fresh.tables);
    expect(upgraded.columns).toEqual(fresh.columns);
    expect(fresh.tables.filter((t) => / View /.test(t)).length).toBe(listPlainViews().length);
  });

  it('keeps the ledger: every current migration recorded with its current checksum, re-runs apply nothing', () => {
    const byName = new Map(ledger.map((r) => [r.name, r.checksum]));
    for (const m of listMigrations()) expect(byName.get(m.name), m.name).toBe(m.checksum);
    expect(rerun.applied).toEqual([]);
    expect(rerun.views).toEqual(listPlainViews().map((v) => v.name));
  });

  it('cites no document the repo lacks in any table, view or column comment', () => {
    for (const s of [...fresh.tables, ...fresh.columns]) expect(s).not.toMatch(/DESIGN/);
  });
});
