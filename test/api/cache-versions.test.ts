/**
 * No stampede on a new data version, on the real app over chDB (the vault scenario) with
 * the API-only role's data version (api/data-version.ts: the store's active parts), moved
 * by inserting a block that advances a chain watermark. While the new version's answer is
 * computed, the previous one is served with its own `X-Data-Watermark`; the new one is
 * computed once, in the background, whatever the number of requests.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type StoredDataVersion, storedDataVersion } from '../../api/data-version.ts';
import { ResponseCache } from '../../api/http/cache.ts';
import type { Store } from '../../store/client.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { blocks, MAINNET, NOW, SLUG, vaultScenarioLines } from '../support/vault-scenario.ts';

let api: ApiHarness;
let version: StoredDataVersion;
/** Queries the API ran on the store (the data-version reads are not counted: they use the store directly). */
let queries = 0;

function counting(store: Store): Store {
  return new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop === 'query' || prop === 'queryRaw')
        return (...args: unknown[]) => {
          queries++;
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

beforeAll(async () => {
  api = await startApiHarness(vaultScenarioLines(), {
    clock: () => NOW * 1000,
    dataVersion: (store) => {
      version = storedDataVersion(store, { minIntervalMs: 50 });
      return () => version.current();
    },
    apiStore: counting,
  });
  await version.refresh();
}, 120_000);
afterAll(async () => api?.close());

/** Lands a new block of chain 1, `hours` after its last one: the data version and the watermark move. */
async function landBlock(hours: number): Promise<void> {
  const before = await version.refresh();
  const last = blocks[MAINNET].at(-1) as number;
  const n = 900_000 + hours;
  await api.store.insert('blocks_raw', [
    {
      chain_id: MAINNET,
      block_number: n,
      block_hash: `0x${n.toString(16).padStart(64, 'a')}`,
      parent_hash: `0x${(n - 1).toString(16).padStart(64, 'a')}`,
      block_time: last + hours * 3600,
      removed: 0,
      ver: n,
    },
  ]);
  expect(await version.refresh(), 'the data version moved').not.toBe(before);
}

describe('a new data version', () => {
  it('serves the previous answer with its watermark while the new one is computed once in the background', async () => {
    const path = `/v1/vaults/${SLUG.alpha}`;
    const first = await api.request(path);
    expect(first.status, first.text).toBe(200);
    const oldMark = first.headers.get('x-data-watermark');
    expect(oldMark).toBeTruthy();
    // What one computation of the answer costs.
    queries = 0;
    await landBlock(1);
    const computed = await api.request(path);
    await vi.waitFor(
      async () => {
        const r = await api.request(path);
        expect(r.headers.get('x-data-watermark')).not.toBe(oldMark);
      },
      { timeout: 20_000, interval: 50 },
    );
    const perLoad = queries;
    expect(perLoad, 'a load queries the store').toBeGreaterThan(0);
    expect(computed.headers.get('x-data-watermark'), 'the first request got the previous answer').toBe(
      oldMark,
    );

    // Now a burst right after the next version lands.
    const settled = await api.request(path);
    const settledMark = settled.headers.get('x-data-watermark');
    queries = 0;
    await landBlock(2);
    const burst = await Promise.all(Array.from({ length: 40 }, () => api.request(path)));
    for (const r of burst) expect(r.status).toBe(200);
    // Each got either the previous answer (with its watermark) or, once landed, the new one.
    const marks = burst.map((r) => r.headers.get('x-data-watermark'));
    expect(marks[0], 'the first of the burst is answered from the previous version').toBe(settledMark);
    for (const r of burst)
      if (r.headers.get('x-data-watermark') === settledMark) expect(r.text).toBe(settled.text);
    await vi.waitFor(
      async () => {
        const r = await api.request(path);
        expect(r.headers.get('x-data-watermark')).not.toBe(settledMark);
      },
      { timeout: 20_000, interval: 50 },
    );
    const fresh = await api.request(path);
    expect(new Date(fresh.headers.get('x-data-watermark') as string).getTime()).toBeGreaterThan(
      new Date(settledMark as string).getTime(),
    );
    // The whole burst and the requests after it cost one computation of the new version.
    expect(queries, 'the new version computed once').toBe(perLoad);
  }, 60_000);
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
