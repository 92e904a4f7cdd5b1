/**
 * An insert cut short between the raw table's part and its views' parts (the engine commits them
 * one by one) is completed, not lost and not counted twice (streams/insert-journal.ts).
 *
 * The cut is made in the engine itself: a materialized view over `transfers_raw`, added by the
 * test, fails every insert until a moment a few seconds on. The first insert of transfers then
 * stores its raw part and none of the views' deltas, and fails; the consumer retries it once the
 * moment has passed. Without the journal, the retry's stored-state lookup read the raw rows as
 * stored and dropped them: the balances missed the whole batch.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { migrate } from '../../views/migrate.ts';
import { runCli } from '../support/cli.ts';
import { buildScenario, registryLines } from '../support/scenario.ts';
import { expectMatchesTruth, viewSnapshot } from '../support/truth.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-journal-'));
const dataDir = join(dir, 'data');
const file = join(dir, 'events.ndjson');
const scenario = buildScenario({ seed: 39, transfers: 600 });
const env = { VAULTSTREAM_DATA_DIR: dataDir, VAULTSTREAM__streams__maxBatchSize: '150', LOG_LEVEL: 'info' };

async function withStore<T>(fn: (s: Store) => Promise<T>): Promise<T> {
  const store = await createStore(parseConfig({ dataDir }));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('an insert cut short between the raw part and its views', () => {
  beforeAll(() => withStore((store) => migrate(store, { database: store.database, cluster: '' })), 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every view of a raw table deduplicates a repeated insert', async () => {
    await withStore(async (store) => {
      const views = await store.query<{ name: string; target: string }>(
        `SELECT name, arrayElement(dependencies_table, 1) AS target FROM system.tables
         WHERE database = '${store.database}' AND engine = 'MaterializedView' ORDER BY name`,
      );
      expect(views.length).toBeGreaterThan(5);
      const settings = await store.query<{ name: string; window: string }>(
        `SELECT name, extract(create_table_query, 'non_replicated_deduplication_window = (\\\\d+)') AS window
         FROM system.tables WHERE database = '${store.database}'`,
      );
      const windowOf = new Map(settings.map((s) => [s.name, Number(s.window || 0)]));
      // A view's target table without a window would take a repeated block twice.
      const targets = await store.query<{ view: string; target: string }>(
        `SELECT name AS view, extract(create_table_query, ' TO ${store.database}\\\\.(\\\\w+)') AS target
         FROM system.tables WHERE database = '${store.database}' AND engine = 'MaterializedView'`,
      );
      for (const t of targets) expect(windowOf.get(t.target), `${t.view} -> ${t.target}`).toBeGreaterThan(0);
    });
  });

  it('completes the insert on its retry: every balance, holder count and supply equals the truth', async () => {
    writeFileSync(
      file,
      `${[...registryLines(['nest-alpha', 'nest-treasuries'], [98866, 1]), ...scenario.lines].join('\n')}\n`,
    );
    // Fails every insert into transfers_raw for the next few seconds, after the raw part is stored.
    const until = Math.floor(Date.now() / 1000) + 6;
    await withStore((store) =>
      store.command(
        `CREATE MATERIALIZED VIEW ${store.database}.test_cut_short
         ENGINE = Null AS SELECT throwIf(now() < toDateTime(${until}, 'UTC'), 'cut short') AS x
         FROM ${store.database}.transfers_raw`,
      ),
    );
    const run = await runCli(['replay', file], env);
    expect(run.stdout, run.stderr.slice(-2000)).toMatch(/stored/);
    // The cut happened: a transfers insert failed with the view's error, and was retried.
    const failed = run.stderr
      .split('\n')
      .filter((l) => /cut short/.test(l) && /"vaultstream.transfers"/.test(l));
    expect(failed.length).toBeGreaterThan(0);
    await withStore(async (store) => {
      await store.command(`DROP VIEW ${store.database}.test_cut_short`);
      const [raw] = await store.query<{ n: string; ids: string }>(
        `SELECT toString(count()) AS n, toString(uniqExact(event_id)) AS ids FROM ${store.database}.transfers_raw FINAL`,
      );
      expect(raw.n).toBe(raw.ids);
      expectMatchesTruth((await viewSnapshot(store)) as never, scenario.truth);
      // Nothing is left pending, and the journal's done entries hold no rows.
      const [j] = await store.query<{ pending: string; bytes: string }>(
        `SELECT toString(countIf(d = 0)) AS pending, toString(sum(b)) AS bytes FROM (
           SELECT argMax(done, ver) AS d, argMax(length(rows_base64), ver) AS b
           FROM ${store.database}.insert_journal GROUP BY slot)`,
      );
      expect(j).toEqual({ pending: '0', bytes: '0' });
    });
    expect(run.stderr).toMatch(/completed an insert that had been cut short/);
  });
});
