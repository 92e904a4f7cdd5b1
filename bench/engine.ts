/**
 * The engine alone: 1M transfer rows (10,000 with `--size tiny`), encoded as TabSeparated
 * beforehand, inserted in 50k-row batches (5,000 tiny) through the store into the real
 * `transfers_raw` (with its views), into a Null table (parsing only), and, for comparison,
 * through chDB's own raw insert, which reads the body as the inline data of a query. Usage:
 *   npx tsx bench/engine.ts [--size tiny|full] [--out FILE.json] [--rows N] [--batch N]
 * A diagnostic (no target): where the insert's time goes, engine or store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore } from '../cli/wiring.ts';
import { parseConfig } from '../core/config.ts';
import { transferEvents } from '../devnet/synthetic-transfers.ts';
import type { Row } from '../schemas/descriptor.ts';
import { toTsvBuffer } from '../store/tsv.ts';
import { toRow } from '../streams/rows.ts';
import { migrate } from '../views/migrate.ts';
import { benchArgs, row, writeReport } from './report.ts';

const { values, size, out } = benchArgs(
  'engine',
  { rows: undefined, batch: undefined },
  { tiny: { rows: '10000', batch: '5000' }, full: { rows: '1000000', batch: '50000' } },
);
const total = Number(values.rows);
const batch = Number(values.batch);
const dir = mkdtempSync(join(tmpdir(), 'vs-engine-'));
const cfg = parseConfig({ dataDir: dir, logLevel: 'warn' });
const store = await createStore(cfg);
const db = cfg.store.database;
await migrate(store, { database: db, cluster: '' });
await store.command(`CREATE TABLE ${db}.transfers_null AS ${db}.transfers_raw ENGINE = Null`);

const batches: Buffer[] = [];
let columns: string[] = [];
let rows: Row[] = [];
let ver = 1;
for (const ev of transferEvents(total, 50)) {
  const r = toRow('transfers', ev);
  r.ver = ver++;
  rows.push(r);
  if (rows.length === batch || ver > total) {
    columns = Object.keys(rows[0]);
    batches.push(toTsvBuffer(rows, columns));
    rows = [];
  }
}

async function timed(label: string, insert: (b: Buffer, i: number) => Promise<unknown>) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < batches.length; i++) await insert(batches[i], i);
  const cpu = process.cpuUsage(cpu0);
  return {
    label,
    seconds: Number(((performance.now() - t0) / 1000).toFixed(2)),
    cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
  };
}

const settings = (i: number) => ({
  insert_deduplication_token: `engine-${i}`,
  deduplicate_blocks_in_dependent_materialized_views: 1,
});
const { chdb } = (store.client as unknown as { connection: { chdb: ChdbExtension } }).connection;
interface ChdbExtension {
  rawInsert(p: { table: string; columns: string[]; values: Buffer; format: string }): Promise<unknown>;
}
const results = [
  await timed('store → transfers_raw and its 3 views', (b, i) =>
    store.insertTsv('transfers_raw', columns, b, settings(i)),
  ),
  await timed('store → Null table (parsing only)', (b, i) =>
    store.insertTsv('transfers_null', columns, b, settings(i)),
  ),
  await timed('chDB rawInsert → Null table', (b) =>
    chdb.rawInsert({ table: `${db}.transfers_null`, columns, values: b, format: 'TabSeparated' }),
  ),
];
writeReport(out, {
  name: 'engine',
  size,
  rows: results.map((r) =>
    row(`engine, ${total.toLocaleString('en')} TSV rows: ${r.label}`, r.seconds, 's', undefined, true, {
      cpuSeconds: r.cpuSeconds,
    }),
  ),
  rowsInserted: total,
  batch,
  bytesPerRow: Math.round(batches.reduce((a, b) => a + b.length, 0) / total),
});
await store.close();
rmSync(dir, { recursive: true, force: true });
