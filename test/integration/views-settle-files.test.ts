/**
 * The settle's SQL files (views/settle): every settled table is written from files named after it,
 * each file is a target's or a query the loop runs, each target file's header names the inputs
 * that make a vault dirty for it (as views/settle-targets.ts lists them), only the write
 * (loop/write.sql) takes text other than the database, and, in a migrated store, each file's rows
 * carry every column of its table by name (the write picks them so) and the write of each target
 * renders to a statement the engine accepts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { migrate } from '../../views/migrate.ts';
import { SETTLE_DIR, settleSql, TARGETS, writeQuery } from '../../views/settle-targets.ts';

const SETTLE_TS = ['settle.ts', 'settle-targets.ts'].map((f) => join(SETTLE_DIR, '..', f));
/** What loop/write.sql takes besides the database (views/settle-targets.ts `writeQuery`). */
const WRITE_VARS = ['{{table}}', '{{columns}}', '{{rows}}', '{{day}}'];
const sqlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -4))
    .sort();

describe('the files of views/settle', () => {
  it('are the targets’ files and the loop’s queries, each used', () => {
    expect(sqlFiles(SETTLE_DIR)).toEqual(TARGETS.map((t) => t.file).sort());
    for (const t of TARGETS)
      expect(t.file === t.table || t.file.startsWith(`${t.table}.`), t.file).toBe(true);
    const loop = SETTLE_TS.map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const f of sqlFiles(join(SETTLE_DIR, 'loop'))) expect(loop, f).toContain(`'loop/${f}'`);
  });

  it('name in their header the inputs that make a vault dirty, as the targets list them', () => {
    for (const t of TARGETS) {
      const text = readFileSync(join(SETTLE_DIR, `${t.file}.sql`), 'utf8');
      const line = /^-- Inputs: (.+)$/m.exec(text);
      expect(line, t.file).not.toBeNull();
      expect(line?.[1].split(', '), t.file).toEqual([...t.inputs]);
      expect(text.startsWith(`-- ${t.table} `), t.file).toBe(true);
    }
  });

  it('put nothing in the SQL but the database (and the write its table): every value is a bound parameter', () => {
    for (const dir of [SETTLE_DIR, join(SETTLE_DIR, 'loop')])
      for (const f of sqlFiles(dir)) {
        const name = `${dir === SETTLE_DIR ? '' : 'loop/'}${f}`;
        const text = readFileSync(join(dir, `${f}.sql`), 'utf8');
        const allowed = name === 'loop/write' ? ['{{db}}', ...WRITE_VARS] : ['{{db}}'];
        expect(text.match(/\{\{(\w+)\}\}/g)?.filter((m) => !allowed.includes(m)) ?? [], f).toEqual([]);
        if (name !== 'loop/write') expect(settleSql(name, 'vs_test')).not.toContain('{{');
      }
    // The renderer refuses a placeholder it is not given, so the write cannot go out half rendered.
    expect(() => settleSql('loop/write', 'vs_test')).toThrow(/\{\{table\}\}|\{\{columns\}\}/);
  });
});

describe('in a migrated store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vs-settle-files-'));
  let store: Store;
  beforeAll(async () => {
    const config = parseConfig({ dataDir: join(dir, 'data') });
    store = await createStore(config);
    await migrate(store, { database: config.store.database, cluster: '' });
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each target file gives every column of its table by name', async () => {
    const db = store.database;
    const params = { vaults: ['sa'], froms: ['2026-01-01'] };
    for (const t of TARGETS) {
      const table = await store.query<{ name: string }>(
        `SELECT name FROM system.columns WHERE database = {db:String} AND table = {table:String}
         AND name NOT IN ('version', 'deleted')`,
        { db, table: t.table },
      );
      const rows = (await store.query<{ name: string }>(`DESCRIBE (${settleSql(t.file, db)})`, params)).map(
        (c) => c.name,
      );
      expect(table.length, t.table).toBeGreaterThan(0);
      for (const { name } of table) expect(rows, `${t.file}: ${name}`).toContain(name);
    }
  });

  it('writes each target with a statement the engine runs, and refuses columns of another table', async () => {
    const db = store.database;
    const columnsOf = async (table: string) =>
      (
        await store.query<{ name: string }>(
          `SELECT name FROM system.columns WHERE database = {db:String} AND table = {table:String}
           AND name NOT IN ('version', 'deleted')`,
          { db, table },
        )
      ).map((c) => c.name);
    const from = new Map([['sa', '2026-01-01']]);
    for (const t of TARGETS) {
      const w = writeQuery(t, db, await columnsOf(t.table), from, 10n);
      await expect(
        store.queryRaw(w.sql, { background: true, params: w.params }),
        t.file,
      ).resolves.not.toThrow();
    }
    const volume = TARGETS.find((t) => t.table === 'metrics_volume');
    if (!volume) throw new Error('no metrics_volume target');
    const wrong = writeQuery(volume, db, await columnsOf('metrics_vault_head'), from, 10n);
    await expect(store.queryRaw(wrong.sql, { background: true, params: wrong.params })).rejects.toThrow(
      /NO_SUCH_COLUMN|UNKNOWN_IDENTIFIER/,
    );
  });
});
