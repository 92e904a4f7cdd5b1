/**
 * The settle loop (views/settle.ts Settler) while an ingester of the process backfills: it does
 * not settle (not even at its start) until the backfill is over or its longest hold passed, then
 * settles at its interval again; it counts as caught up (`/readyz` waits for it) once a settle
 * began after the backfill ended and the consumers stored it. On the embedded engine, with a vault
 * whose rates are to settle.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { migrate } from '../../views/migrate.ts';
import { Settler } from '../../views/settle.ts';
import { rate, registry } from '../support/settle-rows.ts';

const DAY = 86_400;
const dir = mkdtempSync(join(tmpdir(), 'vs-settle-hold-'));
let store: Store;
let db: string;
const START = Math.floor(Date.now() / 1000 / DAY) * DAY - 10 * DAY;

/** Rows of the metrics table the settle writes for the vault. */
async function settledRows(): Promise<number> {
  const [r] = await store.query<{ n: string }>(
    `SELECT toString(count()) AS n FROM ${db}.metrics_chain_daily FINAL WHERE vault = 'hold'`,
  );
  return Number(r.n);
}

beforeAll(async () => {
  const config = parseConfig({ dataDir: join(dir, 'data') });
  store = await createStore(config);
  db = config.store.database;
  await migrate(store, { database: db, cluster: '' });
  await store.insert('registry_raw', [registry('hold', [98866], '2026-01-01 00:00:00.000')]);
  await store.insert(
    'rates_raw',
    Array.from({ length: 10 }, (_, d) => rate('hold', 98866, START + d * DAY + 3600, 1_000_000 + d * 100)),
  );
}, 60_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the settle loop during a backfill', () => {
  it('holds its settles while backfilling, then settles', async () => {
    let backfilling = true;
    let stored!: () => void;
    let drainedCalls = 0;
    const drained = () => {
      drainedCalls++;
      return new Promise<void>((r) => (stored = r));
    };
    const settler = new Settler(store, { intervalMs: 20, backfilling: () => backfilling, drained });
    settler.start();
    try {
      await new Promise((r) => setTimeout(r, 600));
      expect(settler.version).toBe(0);
      expect(await settledRows()).toBe(0);
      expect(settler.caughtUp, 'caught up while the backfill runs').toBe(false);
      backfilling = false;
      await vi.waitFor(() => expect(settler.version).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
      expect(await settledRows()).toBeGreaterThan(0);
      // Settles run at the interval again, but none covers the backfill while the consumers
      // have not stored what it published.
      await new Promise((r) => setTimeout(r, 300));
      expect(settler.caughtUp, 'caught up before the consumers stored the backfill').toBe(false);
      expect(drainedCalls).toBe(1);
      stored();
      await vi.waitFor(() => expect(settler.caughtUp).toBe(true), { timeout: 20_000, interval: 5 });
    } finally {
      await settler.stop();
    }
  }, 60_000);

  it('settles at least every backfillIntervalMs while backfilling', async () => {
    await store.insert('rates_raw', [rate('hold', 98866, START + 3 * DAY + 7200, 1_000_150)]);
    const settler = new Settler(store, { intervalMs: 20, backfilling: () => true, backfillIntervalMs: 800 });
    const started = performance.now();
    settler.start();
    try {
      await vi.waitFor(() => expect(settler.version).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
      expect(performance.now() - started).toBeGreaterThanOrEqual(800);
      // A settle begun during the backfill does not cover it: the backfill goes on after it.
      expect(settler.caughtUp).toBe(false);
    } finally {
      await settler.stop();
    }
  }, 60_000);

  it('is caught up from the start when no backfill was seen', async () => {
    const settler = new Settler(store, {
      intervalMs: 20,
      backfilling: () => false,
      drained: () => Promise.reject(new Error('not asked without a backfill')),
    });
    expect(settler.caughtUp).toBe(true);
    settler.start();
    await settler.stop();
    expect(settler.caughtUp).toBe(true);
  }, 60_000);
});
