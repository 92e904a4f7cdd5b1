/**
 * Ready means every endpoint answers the data it is ready with, over the activity scenario in
 * chDB: the app's real token-holders snapshots report to a SnapshotReadiness whose conditions are
 * part of a real Readiness beside a metrics settle and another condition the test controls.
 * - Before the process is first ready, GET /token-holders and the endpoints read from the metrics
 *   tables answer 503 NOT_READY with readiness's reasons for them; the endpoints reading the
 *   stored events answer.
 * - Once the rest is ready, /readyz waits for a token-holders snapshot built after that (not the
 *   one built at start) and the first answer after its 200 holds every holder.
 * - Once ready, every endpoint answers whatever readiness says later.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { snapshotTokenHolders, type TokenHolder } from '../../api/read/holders-token-holders.ts';
import { loadRegistry } from '../../api/read/registry.ts';
import { Readiness } from '../../api/readiness.ts';
import { SnapshotReadiness } from '../../api/snapshot-readiness.ts';
import { buildActivityScenario, NOW_MS } from '../support/activity-scenario.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';

const s = buildActivityScenario();
let api: ApiHarness;
const snapshots = new SnapshotReadiness();
/** What the rest of readiness says (the test moves it on). */
let settled = false;
let other = ['waiting for the test'];
const t0 = Date.now();

beforeAll(async () => {
  api = await startApiHarness(s.lines, {
    clock: () => NOW_MS,
    snapshots,
    readiness: (store) =>
      snapshots.watching(
        new Readiness({
          store,
          // The scenario's chains are quiet: their stored watermarks are days before its clock.
          maxLagSeconds: 100 * 86_400,
          chainIds: () => [],
          settled: () => settled,
          conditions: [...snapshots.conditions, { name: 'other', reasons: () => other }],
          clock: () => NOW_MS + (Date.now() - t0),
          minIntervalMs: 0,
        }),
      ),
  });
}, 120_000);
afterAll(() => api?.close());

async function holdersNow(): Promise<TokenHolder[]> {
  const snap = await snapshotTokenHolders(api.store, await loadRegistry(api.store));
  try {
    const rows: TokenHolder[] = [];
    for await (const page of snap.pages(1000)) rows.push(...page);
    return rows;
  } finally {
    await snap.drop();
  }
}

describe('the first answers at ready', () => {
  it('before ready: data not built answers 503 NOT_READY with the reasons, the stored events answer', async () => {
    const holders = await api.request('/v1/token-holders');
    expect(holders.status, holders.text).toBe(503);
    expect(holders.body.code).toBe('NOT_READY');
    expect(holders.body.details.reasons).toEqual([
      'token-holders: not built yet: waits for the rest of readiness',
    ]);
    const vaults = await api.request('/v1/vaults/holders?status=all');
    expect(vaults.status, vaults.text).toBe(503);
    expect(vaults.body.details.reasons).toEqual([
      'metrics: the backfilled history is not settled into the metrics tables yet',
    ]);
    expect(vaults.headers.get('retry-after')).toBe('5');
    for (const path of ['/v1/vaults/recent-transactions?status=all', '/v1/vaults/alpha/roles-assignments'])
      expect((await api.request(path)).status, path).toBe(200);
  });

  it('once the rest is ready, /readyz waits for a snapshot built after it; then the first answer has every holder', async () => {
    settled = true;
    other = [];
    const seen: string[][] = [];
    await vi.waitFor(
      async () => {
        const r = await api.request('/readyz');
        seen.push(r.body.reasons);
        expect(r.status).toBe(200);
      },
      { timeout: 30_000, interval: 50 },
    );
    // Never ready on the snapshot built at start: one built after the rest was ready, first.
    expect(
      seen.some(
        (r) => r.length === 1 && r[0].startsWith('token-holders: being built from the data stored at'),
      ),
    ).toBe(true);
    const first = await api.request('/v1/token-holders');
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('x-snapshot-stale')).toBeNull();
    const want = await holdersNow();
    expect(want.length).toBeGreaterThan(10);
    expect(first.body.data.count).toBe(want.length);
    expect(first.body.data.holders).toEqual(want);
  });

  it('once ready, every endpoint answers whatever readiness says later', async () => {
    other = ['a later trouble'];
    settled = false;
    expect((await api.request('/readyz')).status).toBe(503);
    for (const path of ['/v1/vaults/holders?status=all', '/v1/token-holders']) {
      const r = await api.request(path);
      expect(r.status, `${path}: ${r.text.slice(0, 300)}`).toBe(200);
    }
  });
});
