/**
 * No stampede on a new data version, on the real app over chDB (the vault scenario) with
 * the API-only role's data version (api/data-version.ts: the store's active parts), moved
 * by inserting a block that advances a chain watermark. While the new version's answer is
 * computed, the previous one is served with its own `X-Data-Watermark`; the new one is
 * computed once, in the background, whatever the number of requests (the app's
 * `vaultstream_api_cache_loads_total`).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pacedVersion, type StoredDataVersion, storedDataVersion } from '../../api/data-version.ts';
import { ResponseCache } from '../../api/http/cache.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { blocks, MAINNET, NOW, SLUG, vaultScenarioLines } from '../support/vault-scenario.ts';

let api: ApiHarness;
let version: StoredDataVersion;

beforeAll(async () => {
  api = await startApiHarness(vaultScenarioLines(), {
    clock: () => NOW * 1000,
    dataVersion: (store) => {
      version = storedDataVersion(store, { minIntervalMs: 50 });
      return () => version.current();
    },
  });
  // Only inserts move the version here: a background merge would move it too (a new version, a new load).
  await api.store.command('SYSTEM STOP MERGES');
  await version.refresh();
}, 120_000);
afterAll(async () => api?.close());

/** Answers computed for `route` so far (the app's /metrics), foreground and background. */
async function loadsOf(route: string): Promise<{ foreground: number; background: number }> {
  const text = (await api.request('/metrics')).text;
  const count = (mode: string) => {
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('vaultstream_api_cache_loads_total{') &&
          l.includes(`route="${route}"`) &&
          l.includes(`mode="${mode}"`),
      );
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  return { foreground: count('foreground'), background: count('background') };
}

/** Lands a new block of chain 1, `hours` after its last one: the data version and the watermark move. */
async function landBlock(hours: number): Promise<string> {
  const before = await version.refresh();
  const last = blocks[MAINNET].at(-1) as number;
  const n = 900_000 + hours;
  // Its insert sequence is the newest, as the consumer's would be (the watermark is the newest block's).
  const [{ ver }] = await api.store.query<{ ver: string }>(
    `SELECT toString(max(ver) + 1) AS ver FROM ${api.store.database}.blocks_raw`,
  );
  await api.store.insert('blocks_raw', [
    {
      chain_id: MAINNET,
      block_number: n,
      block_hash: `0x${n.toString(16).padStart(64, 'a')}`,
      parent_hash: `0x${(n - 1).toString(16).padStart(64, 'a')}`,
      block_time: last + hours * 3600,
      removed: 0,
      ver,
    },
  ]);
  const after = await version.refresh();
  expect(after, 'the data version moved').not.toBe(before);
  return after;
}

describe('a new data version', () => {
  it('serves the previous answer with its watermark while the new one is computed once in the background', async () => {
    const route = '/v1/vaults/:slug';
    const path = `/v1/vaults/${SLUG.alpha}`;
    const watermark = (r: { headers: Headers }) => r.headers.get('x-data-watermark') as string;
    const before = await api.request(path);
    expect(before.status, before.text).toBe(200);
    const loaded = await loadsOf(route);
    expect(loaded.foreground, 'the first answer was computed').toBeGreaterThan(0);
    const moved = await landBlock(1);
    // Forty at once: each gets the previous answer with its watermark, or, once landed, the new one.
    const burst = await Promise.all(Array.from({ length: 40 }, () => api.request(path)));
    await vi.waitFor(async () => expect(watermark(await api.request(path))).not.toBe(watermark(before)), {
      timeout: 20_000,
      interval: 50,
    });
    const after = await api.request(path);
    expect(await version.refresh(), 'no other version meanwhile').toBe(moved);
    expect(watermark(burst[0]), 'answered from the previous version').toBe(watermark(before));
    for (const r of burst) {
      expect(r.status).toBe(200);
      if (watermark(r) === watermark(before)) expect(r.text).toBe(before.text);
      else expect(r.text).toBe(after.text);
    }
    expect(new Date(watermark(after)).getTime()).toBeGreaterThan(new Date(watermark(before)).getTime());
    // The burst and every request after it cost one computation of the new version, in the background.
    expect(await loadsOf(route)).toEqual({
      foreground: loaded.foreground,
      background: loaded.background + 1,
    });
  }, 60_000);
});

describe('the stored data version', () => {
  it("ignores the API's own snapshot tables (else each snapshot made a new version, and a new snapshot)", async () => {
    const db = api.store.database;
    const before = await version.refresh();
    await api.store.command(
      `CREATE TABLE ${db}.token_holders_snapshot_00000000000000ff (x UInt8) ENGINE = MergeTree ORDER BY x`,
    );
    await api.store.command(`INSERT INTO ${db}.token_holders_snapshot_00000000000000ff VALUES (1)`);
    expect(await version.refresh()).toBe(before);
    await api.store.command(`DROP TABLE ${db}.token_holders_snapshot_00000000000000ff`);
  });
});

describe('the in-process data version, paced', () => {
  it('shows a change at once after a quiet interval, then at most one change per interval, the newest one', () => {
    let source = 1;
    let t = 10_000;
    const version = pacedVersion(() => String(source), { intervalMs: 1000, clock: () => t });
    expect(version()).toBe('1');
    source = 2; // the first change after a quiet spell: shown at once
    expect(version()).toBe('2');
    t += 300;
    source = 3;
    expect(version()).toBe('2');
    t += 400;
    source = 4;
    expect(version()).toBe('2');
    t += 300; // 1000 ms since '2' was shown: the newest version, skipping '3'
    expect(version()).toBe('4');
    t += 5000;
    expect(version()).toBe('4'); // nothing new: nothing moves
    source = 5;
    expect(version()).toBe('5');
  });

  it('with interval 0 every change shows at once', () => {
    let source = 1;
    const version = pacedVersion(() => String(source), { intervalMs: 0, clock: () => 0 });
    for (source = 1; source < 5; source++) expect(version()).toBe(String(source));
  });
});

describe('ResponseCache across data versions', () => {
  /** A cache over a version and a clock the test moves, and a loader gated by the test. */
  function setup(maxStaleMs = 2000) {
    const t = { now: 0, version: 1, loads: [] as number[] };
    const gates: (() => void)[] = [];
    const cache = new ResponseCache({
      version: () => t.version,
      ttlMs: 60_000,
      maxStaleMs,
      clock: () => t.now,
    });
    const load = async () => {
      const v = t.version;
      t.loads.push(v);
      if (t.loads.length > 1) await new Promise<void>((r) => gates.push(r));
      return { body: { v } };
    };
    const body = (r: { entry: { body: Buffer } }) => JSON.parse(r.entry.body.toString()).v;
    const settle = () => new Promise((r) => setImmediate(r));
    return { t, cache, load, body, gates, settle };
  }

  it('serves the previous version while one background load computes the new one, then the new one', async () => {
    const { t, cache, load, body, gates, settle } = setup();
    await cache.get('r', 'k', load);
    t.version = 2;
    t.now = 100;
    const during = await Promise.all(Array.from({ length: 20 }, () => cache.get('r', 'k', load)));
    expect(new Set(during.map((r) => r.result))).toEqual(new Set(['previous']));
    expect(new Set(during.map(body))).toEqual(new Set([1]));
    expect(t.loads).toEqual([1, 2]); // one load of version 2 for all 20
    gates.shift()?.();
    await settle();
    const after = await cache.get('r', 'k', load);
    expect([after.result, body(after)]).toEqual(['hit', 2]);
    expect(cache.size).toBe(1); // version 1's answer left once superseded
  });

  it('versions that pass while a load runs start no load of their own until it lands', async () => {
    const { t, cache, load, body, gates, settle } = setup();
    await cache.get('r', 'k', load);
    t.version = 2;
    expect(body(await cache.get('r', 'k', load))).toBe(1);
    t.version = 3;
    t.now = 500;
    expect(body(await cache.get('r', 'k', load))).toBe(1);
    t.version = 4;
    expect(body(await cache.get('r', 'k', load))).toBe(1);
    expect(t.loads).toEqual([1, 2]);
    gates.shift()?.(); // version 2's answer lands
    await settle();
    const next = await cache.get('r', 'k', load); // version 4: version 2's answer, one load of 4
    expect([next.result, body(next)]).toEqual(['previous', 2]);
    expect(t.loads).toEqual([1, 2, 4]);
    gates.shift()?.();
    await settle();
    expect(body(await cache.get('r', 'k', load))).toBe(4);
  });

  it('past the bound a request waits for the new version (staleness counts from when the old one was last current)', async () => {
    const { t, cache, load, body, gates } = setup(2000);
    await cache.get('r', 'k', load); // version 1 seen current at 0
    t.now = 1000;
    await cache.get('r', 'k', load); // ... and at 1000
    t.version = 2;
    t.now = 3001; // 2001 ms after version 1 was last seen current
    const waiting = cache.get('r', 'k', load);
    await new Promise((r) => setImmediate(r));
    gates.shift()?.();
    const r = await waiting;
    expect([r.result, body(r)]).toEqual(['miss', 2]);
  });

  it('past the bound while a slow load of a newer version runs, requests wait for it, not load again', async () => {
    const { t, cache, load, body, gates, settle } = setup(2000);
    let admitted = 0;
    const admit = () => {
      admitted++;
      return () => {};
    };
    await cache.get('r', 'k', load, admit); // version 1, seen current until 100
    t.version = 2;
    t.now = 100;
    expect(body(await cache.get('r', 'k', load, admit))).toBe(1); // version 2's load starts
    t.now = 1500;
    expect(body(await cache.get('r', 'k', load, admit))).toBe(1); // version 2 seen current at 1500
    t.version = 3;
    expect(body(await cache.get('r', 'k', load, admit))).toBe(1);
    t.now = 2500; // version 1's answer is now past the bound (2400 ms); version 2's still loads
    const waiting = Array.from({ length: 20 }, () => cache.get('r', 'k', load, admit));
    await settle();
    expect(t.loads).toEqual([1, 2]); // no load of version 3 for the 20 (each would be a client's)
    gates.shift()?.(); // version 2's answer lands
    const got = await Promise.all(waiting);
    // Version 2 was superseded 1000 ms ago: within the bound. One background load of version 3.
    expect(new Set(got.map((r) => `${r.result} ${body(r)}`))).toEqual(new Set(['previous 2']));
    expect(t.loads).toEqual([1, 2, 3]);
    expect(admitted).toBe(1); // version 1's first load only
    gates.shift()?.();
    await settle();
    expect(body(await cache.get('r', 'k', load, admit))).toBe(3);
  });

  it('an idle cache does not serve an answer whose version ended long ago, nor with maxStaleMs 0', async () => {
    for (const [maxStale, idle] of [
      [2000, 10_000],
      [0, 1],
    ]) {
      const { t, cache, load, body, gates } = setup(maxStale);
      await cache.get('r', 'k', load);
      t.version = 2;
      t.now = idle;
      const waiting = cache.get('r', 'k', load);
      await new Promise((r) => setImmediate(r));
      gates.shift()?.();
      const r = await waiting;
      expect([r.result, body(r)], `maxStaleMs ${maxStale}`).toEqual(['miss', 2]);
    }
  });
});
