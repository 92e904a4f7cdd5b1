/**
 * An insert cut short between the raw table's part and its views' parts (the engine commits them
 * one by one) is completed, not lost and not counted twice (streams/insert-journal.ts).
 *
 * The cut is made in the engine itself: a materialized view over `transfers_raw`, added by the
 * test, fails every insert, after the raw part is stored, until the test sees an insert of
 * transfers fail with raw rows stored, and drops the view. The consumer retries the batch; without
 * the journal, the retry's stored-state lookup read the raw rows as stored and dropped them: the
 * balances missed the whole batch.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBus, createCodec } from '../../cli/wiring.ts';
import { parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import { replayFile } from '../../ingest/replay.ts';
import { createStore, type Store } from '../../store/client.ts';
import { StreamProcessor } from '../../streams/processor.ts';
import { migrate } from '../../views/migrate.ts';
import { buildScenario, registryLines } from '../support/scenario.ts';
import { expectMatchesTruth, viewSnapshot } from '../support/truth.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-journal-'));
const file = join(dir, 'events.ndjson');
const scenario = buildScenario({ seed: 39, transfers: 600 });
const config = parseConfig({ dataDir: join(dir, 'data'), streams: { maxBatchSize: 150 } });
let store: Store;

describe('an insert cut short between the raw part and its views', () => {
  beforeAll(async () => {
    store = await createStore(config);
    await migrate(store, { database: store.database, cluster: '' });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every view of a raw table deduplicates a repeated insert', async () => {
    const db = store.database;
    const settings = await store.query<{ name: string; window: string }>(
      `SELECT name, extract(create_table_query, 'non_replicated_deduplication_window = (\\\\d+)') AS window
       FROM system.tables WHERE database = '${db}'`,
    );
    const windowOf = new Map(settings.map((s) => [s.name, Number(s.window || 0)]));
    // A view's target table without a window would take a repeated block twice.
    const targets = await store.query<{ view: string; target: string }>(
      `SELECT name AS view, extract(create_table_query, ' TO ${db}\\\\.(\\\\w+)') AS target
       FROM system.tables WHERE database = '${db}' AND engine = 'MaterializedView'`,
    );
    expect(targets.length).toBeGreaterThan(5);
    for (const t of targets) expect(windowOf.get(t.target), `${t.view} -> ${t.target}`).toBeGreaterThan(0);
  });

  it('completes the insert on its retry: every balance, holder count and supply equals the truth', async () => {
    const db = store.database;
    writeFileSync(
      file,
      `${[...registryLines(['nest-alpha', 'nest-treasuries'], [98866, 1]), ...scenario.lines].join('\n')}\n`,
    );
    // Fails every insert into transfers_raw, once the raw part is stored (and some of the other
    // views' parts, whichever the engine wrote before this one's).
    await store.command(
      `CREATE MATERIALIZED VIEW ${db}.test_cut_short ENGINE = Null
       AS SELECT throwIf(1, 'cut short') AS x FROM ${db}.transfers_raw`,
    );
    const bus = await createBus(config, silentLogger);
    const codec = createCodec(config);
    await bus.connect();
    await replayFile(file, { bus, codec, topicPrefix: config.topicPrefix });
    // The processor's log: its failed batches.
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => lines.push(l) });
    const processor = new StreamProcessor({ bus, store, codec, config, log });
    await processor.start();
    try {
      // The cut: a transfers insert failed, its raw rows stored.
      await vi.waitFor(
        async () => {
          expect(lines.some((l) => l.includes('cut short') && l.includes('vaultstream.transfers'))).toBe(
            true,
          );
          const [r] = await store.query<{ raw: string }>(
            `SELECT toString(count()) AS raw FROM ${db}.transfers_raw`,
          );
          expect(Number(r.raw)).toBeGreaterThan(0);
        },
        { timeout: 60_000, interval: 50 },
      );
      await store.command(`DROP VIEW ${db}.test_cut_short`);
      await processor.drained();
    } finally {
      await processor.stop();
      await bus.close();
    }
    expectMatchesTruth((await viewSnapshot(store)) as never, scenario.truth);
    // Nothing is left pending, and the journal's done entries hold no rows.
    const [j] = await store.query<{ pending: string; bytes: string }>(
      `SELECT toString(countIf(d = 0)) AS pending, toString(sum(b)) AS bytes FROM (
         SELECT argMax(done, ver) AS d, argMax(length(rows_base64), ver) AS b
         FROM ${db}.insert_journal GROUP BY slot)`,
    );
    expect(j).toEqual({ pending: '0', bytes: '0' });
  }, 180_000);
});
