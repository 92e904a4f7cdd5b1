/**
 * The views' join keys have one real type. A view whose column list declares
 * `vault String` while its SELECT yields LowCardinality(String) (toString keeps LowCardinality)
 * answered with the declared type, but a join of several views could plan with the real one:
 * `Block structure mismatch ... LowCardinality(String) ... String` when joining
 * redemption_requests, vault_chain_decimals and vault_share_usd_current. On a fresh store every
 * plain view's declared columns must be what its own SELECT yields (CAST(x, 'String') where a view
 * declares String), and that join runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { migrate } from '../../views/migrate.ts';
import { listPlainViews } from '../../views/plain.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-views-key-types-'));
let store: Store;

beforeAll(async () => {
  store = await createStore(parseConfig({ dataDir: dir }));
  await migrate(store, { database: store.database, cluster: '' });
}, 120_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const columnsOf = (view: string) =>
  store.query<{ name: string; type: string }>(
    'SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {view:String} ORDER BY position',
    { db: store.database, view },
  );

describe('the plain views’ key types', () => {
  it('every declared column is what the view’s own SELECT yields', async () => {
    const wrong: string[] = [];
    for (const { name } of listPlainViews()) {
      const [{ sel }] = await store.query<{ sel: string }>(
        'SELECT as_select AS sel FROM system.tables WHERE database = {db:String} AND name = {name:String}',
        { db: store.database, name },
      );
      const actual = new Map(
        (await store.query<{ name: string; type: string }>(`DESCRIBE (${sel})`)).map((c) => [c.name, c.type]),
      );
      for (const c of await columnsOf(name))
        if (actual.get(c.name) !== c.type)
          wrong.push(`${name}.${c.name}: declared ${c.type}, yields ${actual.get(c.name)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('redemption_requests, vault_chain_decimals and vault_share_usd_current join on vault', async () => {
    const db = store.database;
    const rows = await store.query(
      `SELECT q.vault, d.share_decimals, s.share_usd_e18 FROM ${db}.redemption_requests AS q
       INNER JOIN ${db}.vault_chain_decimals AS d ON d.vault = q.vault AND d.chain_id = q.chain_id
       INNER JOIN ${db}.vault_share_usd_current AS s ON s.vault = q.vault`,
    );
    expect(rows).toEqual([]);
  });
});
