/**
 * Dumps what a data directory's store holds, for comparing two runs of the pipeline over the same
 * events: `node --import tsx store-dump-child.ts <dataDir> <out.json>` (a process of its own: chDB
 * opens one data directory per process). Every table and view of the service database, each row
 * as its final state (FINAL, aggregate states finalized, tombstoned metrics rows left out), sorted,
 * without the columns that say when or by which run a row was written (insert sequences, settle
 * versions, ingest and write times). Skipped: the tables about the run itself (the consumers'
 * journal, the settle's cursor, migrations, the config tables written at start, the API's
 * token-holders snapshots).
 */
import { writeFileSync } from 'node:fs';
import { parseConfig } from '../../core/config.ts';
import { createStore } from '../../store/client.ts';

const [dataDir, out] = process.argv.slice(2);
const RUN_TABLES = new Set([
  'insert_journal',
  'metrics_settle_state',
  'schema_migrations',
  'service_settings',
  'chains',
]);
// Written by the run (insert sequences, settle versions, write times), or read off the clock (as_of: now for today).
const RUN_COLUMNS = new Set(['ver', 'version', 'ingested_at', 'written_at', 'updated_at', 'at', 'as_of']);

const store = await createStore(parseConfig({ dataDir }));
const db = store.database;
const tables = await store.query<{ name: string; engine: string }>(
  `SELECT name, engine FROM system.tables WHERE database = '${db}' AND engine != 'MaterializedView'
   AND NOT startsWith(name, '.inner') AND NOT startsWith(name, 'token_holders_snapshot_') ORDER BY name`,
);
const dump: Record<string, unknown[]> = {};
for (const { name, engine } of tables) {
  if (RUN_TABLES.has(name)) continue;
  const cols = await store.query<{ name: string; type: string }>(
    `SELECT name, type FROM system.columns WHERE database = '${db}' AND table = '${name}' ORDER BY position`,
  );
  // registry_raw's updated_at is the entry's own version (from the record), not a write time.
  const keep = cols.filter(
    (c) => !RUN_COLUMNS.has(c.name) || (name === 'registry_raw' && c.name === 'updated_at'),
  );
  const tombstones = cols.some((c) => c.name === 'deleted') && cols.some((c) => c.name === 'version');
  const select = keep
    .filter((c) => !(tombstones && c.name === 'deleted'))
    .map((c) =>
      c.type.startsWith('AggregateFunction') ? `finalizeAggregation(${c.name}) AS ${c.name}` : c.name,
    )
    .join(', ');
  const final = /(Replacing|Summing|Aggregating|Collapsing)MergeTree/.test(engine) ? ' FINAL' : '';
  const where = tombstones ? ' WHERE deleted = 0' : '';
  dump[name] = await store.query(`SELECT ${select} FROM ${db}.${name}${final}${where} ORDER BY ALL`);
}
await store.close();
writeFileSync(out, JSON.stringify(dump));
