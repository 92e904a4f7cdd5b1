/**
 * The transactions view (activity_by_time, migration 024) under retraction, replay and restart:
 * it equals the current rows of activity_raw, and recentTransactions finds the newest rows of a
 * vault beyond the last week. Its own store: two vaults on the primary chain, no other rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recentTransactions } from '../../api/read/activity-transactions.ts';
import { loadRegistry } from '../../api/read/registry.ts';
import { type Config, parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { migrate } from '../../views/migrate.ts';
import { ev, registry, USDC } from '../support/settle-rows.ts';

const DAY = 86_400;
const dir = mkdtempSync(join(tmpdir(), 'vs-transactions-'));
let config: Config;
let store: Store;
let db: string;

beforeAll(async () => {
  config = parseConfig({ dataDir: join(dir, 'data') });
  store = await createStore(config);
  db = config.store.database;
  await migrate(store, { database: db, cluster: '' });
  await store.insert(
    'registry_raw',
    ['sa', 'sb'].map((v) => registry(v, [98866], '2026-01-01 00:00:00.000')),
  );
}, 60_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('transactions (activity_by_time, migration 024) under retraction, replay and restart', () => {
  const deposit = (vault: string, t: number, removed = 0, base?: ReturnType<typeof ev>) => ({
    ...(base ?? ev(vault, 98866, t)),
    ...(base && { ver: base.ver + 1000 }),
    removed,
    kind: 'DEPOSIT',
    user: '0x00000000000000000000000000000000000000a1',
    shares: '1000000',
    shares_token: `0x${'7a'.repeat(20)}`,
    assets: '1000000',
    assets_token: USDC,
    assets_decimals: 6,
  });
  /** The view's rows, and the raw table's current rows as the view defined them before 024. */
  const both = async () => {
    const q = (from: string) =>
      store.query<{ r: string }>(
        `SELECT arrayStringConcat([event_id, vault, toString(block_time), kind, toString(shares)], '|') AS r
         FROM ${from} ORDER BY r`,
      );
    return {
      view: (await q(`${db}.transactions`)).map((x) => x.r),
      raw: (await q(`(SELECT * FROM ${db}.activity_raw FINAL WHERE removed = 0)`)).map((x) => x.r),
    };
  };
  const NOW = Math.floor(Date.now() / 1000);

  it('equals activity_raw, and the newest rows come from windows widened past the week', async () => {
    // sa: 3 this week, 20 over the 60 days before; sb: 2 a year ago only.
    const week = [1, 2, 3].map((h) => ev('sa', 98866, NOW - h * 3600));
    const older = Array.from({ length: 20 }, (_, i) => ev('sa', 98866, NOW - (10 + 3 * i) * DAY));
    const yearAgo = [ev('sb', 98866, NOW - 400 * DAY), ev('sb', 98866, NOW - 401 * DAY)];
    const rows = [...week, ...older, ...yearAgo].map((e) =>
      deposit(e.vault, 0, 0, { ...e, ver: e.ver - 1000 }),
    );
    await store.insert('activity_raw', rows);
    // A replay (the same rows again) and a retraction of the newest of sa.
    await store.insert('activity_raw', rows.slice(0, 5));
    await store.insert('activity_raw', [deposit('sa', 0, 1, week[0])]);
    const { view, raw } = await both();
    expect(view).toEqual(raw);
    expect(view.length).toBe(rows.length - 1);
    const vaults = await loadRegistry(store);
    const answer = await recentTransactions(store, vaults, { limit: 10, now: NOW });
    const sa = answer[vaults.findIndex((v) => v.slug === 'sa')];
    const sb = answer[vaults.findIndex((v) => v.slug === 'sb')];
    expect(sa.transactionCount7d).toBe(2);
    // The 2 left this week, then the 8 newest older ones; sb's two from a year ago.
    expect(sa.recentTransactions.map((t) => t.createdAt)).toEqual([
      NOW - 2 * 3600,
      NOW - 3 * 3600,
      ...older.slice(0, 8).map((e) => e.block_time),
    ]);
    expect(sb.transactionCount7d).toBe(0);
    expect(sb.recentTransactions.map((t) => t.createdAt)).toEqual([NOW - 400 * DAY, NOW - 401 * DAY]);
  });

  it('equals activity_raw after a restart on the same data directory', async () => {
    await store.close();
    store = await createStore(config);
    const { view, raw } = await both();
    expect(view).toEqual(raw);
    expect(view.length).toBeGreaterThan(0);
  });
});
