/**
 * `/readyz` is 200 only when the migrations ran, every followed chain
 * is live and its STORED watermark (chain_watermarks in chDB, written by the real
 * replay + consumers) is within `api.readiness.maxLagSeconds` of the head; otherwise
 * 503 naming why, per chain. The ingester's progress is given as data (the phases it
 * reports); the clock is injected. Also the API-only role's stored data version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedDataVersion } from '../../api/data-version.ts';
import { type ChainPhase, Readiness, type ReadinessCondition } from '../../api/readiness.ts';
import type { Store } from '../../store/client.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
import { blockSequence } from '../support/events.ts';

const T = 1_760_000_000; // newest stored block time, Unix seconds
const STORED = { 98866: 0, 1: 0 } as Record<number, number>;

function lines(): string[] {
  const next = blockSequence(100);
  const out: string[] = [];
  for (const [chainId, count] of [
    [98866, 5],
    [1, 3],
  ]) {
    for (let i = 0; i < count; i++) {
      const b = next(chainId, T - (count - 1 - i) * 12);
      STORED[chainId] = b.blockNumber;
      out.push(
        JSON.stringify({
          family: 'blocks',
          record: { ...b, parentHash: `0x${'0'.repeat(64)}`, removed: false },
        }),
      );
    }
  }
  return out;
}

let now = T * 1000;
let progress: ChainPhase[] | undefined;
/** What the process's own checks answer (migrations applied, metrics settled). */
const own = { migrated: true, settled: true };
/** What the process's roles add (api/readiness.ts ReadinessCondition). */
const conditions: ReadinessCondition[] = [];
let queries = 0;

/** The harness's real store, counting the queries the readiness check sends. */
function counting(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop === 'query' && typeof v === 'function')
        return (...args: unknown[]) => {
          queries++;
          return v.apply(target, args);
        };
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

let api: ApiHarness;
/** One chDB per process: one harness, whose `/readyz` is either role's check. */
let role: 'ingest' | 'api-only' = 'ingest';
beforeAll(async () => {
  api = await startApiHarness(lines(), {
    config: { api: { readiness: { maxLagSeconds: 60 } } },
    readiness: (store, config) => {
      const withIngester = new Readiness({
        store: counting(store),
        maxLagSeconds: config.api.readiness.maxLagSeconds,
        chainIds: () => [],
        progress: () => progress ?? [],
        migrated: () => own.migrated,
        settled: () => own.settled,
        conditions,
        clock: () => now,
      });
      const apiOnly = new Readiness({
        store,
        maxLagSeconds: config.api.readiness.maxLagSeconds,
        chainIds: () => [98866, 1],
        clock: () => now,
      });
      return { check: () => (role === 'ingest' ? withIngester : apiOnly).check() };
    },
  });
}, 120_000);
afterAll(async () => {
  await api?.close();
});

const live = (chainId: number, published: number): ChainPhase => ({
  chainId,
  phase: 'live',
  head: published,
  next: published + 1,
});

async function readyz(h: ApiHarness, advanceMs = 1000) {
  now += advanceMs; // past the once-a-second memo
  return h.request('/readyz');
}

describe('/readyz with the ingester in the process', () => {
  it('200 when every chain is live and the store holds what the ingester published', async () => {
    progress = [live(98866, STORED[98866]), live(1, STORED[1])];
    const r = await readyz(api);
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('ready');
    expect(r.body.chains.map((c: any) => [c.chainId, c.storedBlock, c.lagSeconds])).toEqual([
      [1, STORED[1], 0],
      [98866, STORED[98866], 0],
    ]);
  });

  it('503 while a chain backfills, and names it', async () => {
    progress = [live(98866, STORED[98866]), { chainId: 1, phase: 'backfill', head: 900, next: 200 }];
    const r = await readyz(api);
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('not_ready');
    expect(r.body.reasons).toEqual(['chain 1: ingester is backfill (next 200, head 900)']);
  });

  it('503 for a stopped chain, with its stoppedReason', async () => {
    progress = [
      live(98866, STORED[98866]),
      { chainId: 1, phase: 'stopped', head: 10, next: 5, stoppedReason: 'reorg deeper than reorgWindow' },
    ];
    const r = await readyz(api);
    expect(r.status).toBe(503);
    const chain1 = r.body.chains.find((c: any) => c.chainId === 1);
    expect(chain1).toMatchObject({ ready: false, phase: 'stopped' });
    expect(chain1.reasons).toEqual(['stopped: reorg deeper than reorgWindow']);
  });

  it('live but the store lags what was published: ready within maxLagSeconds, 503 past it', async () => {
    progress = [live(98866, STORED[98866] + 20), live(1, STORED[1])];
    const first = await readyz(api);
    expect(first.status).toBe(200); // published just now: 0 s behind
    const later = await readyz(api, 30_000);
    expect(later.status).toBe(200);
    expect(later.body.chains.find((c: any) => c.chainId === 98866).lagSeconds).toBe(30);
    const stalled = await readyz(api, 31_000);
    expect(stalled.status).toBe(503);
    expect(stalled.body.reasons).toEqual(['chain 98866: stored watermark 61 s behind the head (max 60 s)']);
  });

  /** /readyz with every chain live while the process's `check` fails, then (once it passes) 200 again. */
  async function readyzWithout(check: keyof typeof own) {
    progress = [live(98866, STORED[98866]), live(1, STORED[1])];
    own[check] = false;
    const r = await readyz(api);
    own[check] = true;
    expect((await readyz(api)).status).toBe(200);
    return r;
  }

  it('503 until this process applied the migrations', async () => {
    const r = await readyzWithout('migrated');
    expect(r.status).toBe(503);
    expect(r.body.migrations.ok).toBe(false);
  });

  it('503 while the metrics tables lag a backfill of the process, with every chain live', async () => {
    const r = await readyzWithout('settled');
    expect(r.status).toBe(503);
    expect(r.body.reasons).toEqual([
      'metrics: the backfilled history is not settled into the metrics tables yet',
    ]);
    expect(r.body.chains.every((c: any) => c.ready)).toBe(true);
  });

  it("503 while a role's condition is not met, its reasons named; a check that fails is a reason too", async () => {
    progress = [live(98866, STORED[98866]), live(1, STORED[1])];
    conditions.push({
      name: 'consumers',
      reasons: () => ['vaultstream.transfers is 1500 messages behind (max 1000)'],
    });
    let r = await readyz(api);
    expect(r.status).toBe(503);
    expect(r.body.reasons).toEqual(['consumers: vaultstream.transfers is 1500 messages behind (max 1000)']);
    conditions[0] = {
      name: 'snapshots',
      reasons: async () => {
        throw new Error('disk gone');
      },
    };
    r = await readyz(api);
    expect(r.body.reasons).toEqual(['snapshots: check failed: disk gone']);
    conditions[0] = { name: 'consumers', reasons: async () => [] };
    r = await readyz(api);
    expect(r.status, r.text).toBe(200);
    conditions.length = 0;
  });

  it('a chain the store has never seen is not ready', async () => {
    progress = [live(98866, STORED[98866]), live(1, STORED[1]), live(56, 7)];
    const r = await readyz(api);
    expect(r.status).toBe(503);
    expect(r.body.reasons).toEqual(['chain 56: no stored watermark']);
  });

  it('a burst of probes reads the store at most once a second', async () => {
    progress = [live(98866, STORED[98866]), live(1, STORED[1])];
    now += 5000;
    const before = queries;
    const all = await Promise.all(Array.from({ length: 50 }, () => api.request('/readyz')));
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(queries - before).toBe(2); // one check: migrations + watermarks
    await Promise.all(Array.from({ length: 20 }, () => api.request('/readyz')));
    expect(queries - before).toBe(2);
  });
});

describe('/readyz in the API-only role (no ingester): stored watermarks vs now', () => {
  beforeAll(() => {
    role = 'api-only';
  });
  it('200 when the stored watermarks are recent', async () => {
    now = (T + 30) * 1000;
    const r = await readyz(api, 0);
    expect(r.status, r.text).toBe(200);
    expect(r.body.chains.map((c: any) => c.lagSeconds)).toEqual([30, 30]);
  });

  it('503 when they are 130 s old (the restart of the issue), per chain', async () => {
    now = (T + 130) * 1000;
    const r = await readyz(api, 0);
    expect(r.status).toBe(503);
    expect(r.body.reasons).toEqual([
      'chain 1: stored watermark 130 s behind the head (max 60 s)',
      'chain 98866: stored watermark 130 s behind the head (max 60 s)',
    ]);
  });
});

describe('stored data version (API-only role cache key)', () => {
  it('changes when data lands in the store, and is read at most once a second', async () => {
    let clock = 0;
    const v = storedDataVersion(api.store, { clock: () => clock });
    const first = await v.refresh();
    expect(first).toMatch(/^\d+-\d+-\d+$/);
    expect(v.current()).toBe(first);
    const db = api.store.database;
    await api.store.command(
      `CREATE TABLE IF NOT EXISTS ${db}.readiness_probe (x UInt8) ENGINE = MergeTree ORDER BY x`,
    );
    await api.store.command(`INSERT INTO ${db}.readiness_probe VALUES (1)`);
    clock = 500;
    expect(v.current()).toBe(first); // within the second: no read
    clock = 1500;
    v.current(); // starts a background read
    const second = await v.refresh();
    expect(second).not.toBe(first);
    expect(v.current()).toBe(second);
  });
});
