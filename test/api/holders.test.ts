/**
 * The holders endpoints over the activity scenario replayed into chDB: every expected
 * value is derived here from the scenario's events (test/support/activity-scenario.ts).
 */
import { describe, expect, it } from 'vitest';
import { responseBodies } from '../../api/http/responses.ts';
import type { HolderHistoryEntry } from '../../api/read/holders-history.ts';
import { snapshotTokenHolders } from '../../api/read/holders-token-holders.ts';
import { loadRegistry } from '../../api/read/registry.ts';
import { NOW } from '../support/activity-scenario.ts';
import { balancesAt, canonical, units } from '../support/activity-truth.ts';
import { usdE18, useActivityApi } from '../support/api-fixture.ts';
import { DAY, HOUR } from '../support/events.ts';

const { s, api, vault } = useActivityApi();
const decimalsOn = (slug: string, chainId: number) => (chainId === 101 ? 9 : vault(slug).record.decimals);

/** The expected token-holder rows, computed from the transfers. */
function tokenHolderTruth() {
  // Ground truth: positive balances per chain, EVM chains summed per vault address, the
  // mint apart, valued at rate x base USD price; all on a 10^-36 scale to stay exact.
  const E36 = 10n ** 36n;
  const rows = new Map<string, { address: string; token: string; x: bigint; usdE18: bigint }>();
  for (const [k, raw] of balancesAt(s)) {
    if (raw <= 0n) continue;
    const [slug, chain, holder] = k.split('|');
    const v = vault(slug);
    const token = chain === '101' ? v.record.solanaMint : v.record.vaultAddress;
    const shareUsdE18 = (v.rate * usdE18(v.record.baseAssetUsdPrice)) / 10n ** BigInt(v.rateDecimals);
    const row = rows.get(`${holder}|${token}`) ?? { address: holder, token, x: 0n, usdE18: shareUsdE18 };
    row.x += raw * 10n ** BigInt(36 - decimalsOn(slug, Number(chain)));
    rows.set(`${holder}|${token}`, row);
  }
  return [...rows.values()]
    .map((r) => ({ ...r, valueE18: (r.x * r.usdE18) / E36 }))
    .sort((a, b) =>
      a.valueE18 !== b.valueE18
        ? a.valueE18 > b.valueE18
          ? -1
          : 1
        : a.address !== b.address
          ? a.address < b.address
            ? -1
            : 1
          : a.token < b.token
            ? -1
            : 1,
    )
    .map((r) => ({
      address: r.address,
      tokenAddress: r.token,
      balance: units(r.x, 36),
      value: units(r.valueE18, 18),
    }));
}

describe('GET /v1/token-holders', () => {
  it('streams one row per (holder, token) sorted by value, equal to the events', async () => {
    const truth = tokenHolderTruth();
    expect(truth.some((r) => r.tokenAddress === vault('alpha').record.solanaMint)).toBe(true);
    expect(truth.some((r) => r.tokenAddress === vault('gamma').record.vaultAddress)).toBe(true);

    const res = await api.request('/v1/token-holders');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBeNull(); // streamed
    expect(res.body).toEqual({ data: { holders: truth, count: truth.length } });
    responseBodies['GET /token-holders'].parse(res.body);
    // One shared snapshot of this data version remains for the next requests, and no other.
    const snapshots = await api.store.query(
      `SELECT name FROM system.tables WHERE database = '${api.store.database}' AND name LIKE 'token_holders_snapshot_%'`,
    );
    expect(snapshots).toHaveLength(1);
  });

  it('pages through the snapshot in order (keyed by row number)', async () => {
    const snap = await snapshotTokenHolders(api.store, await loadRegistry(api.store));
    const pages: number[] = [];
    const rows = [];
    for await (const page of snap.pages(7)) {
      pages.push(page.length);
      rows.push(...page);
    }
    expect(rows).toEqual(tokenHolderTruth());
    expect(snap.count).toBe(rows.length);
    expect(pages.length).toBe(Math.ceil(rows.length / 7));
  });
});

describe('GET /v1/vaults/holders', () => {
  it('lists the largest (chain, user) balances with holderSince and totalHolders', async () => {
    const res = await api.request('/v1/vaults/holders?status=all');
    expect(res.status).toBe(200);
    responseBodies['GET /vaults/holders'].parse(res.body);
    const balances = balancesAt(s);
    const transfers = canonical(s.transfers).sort(
      (a, b) => a.blockTimestamp - b.blockTimestamp || a.blockNumber - b.blockNumber,
    );
    for (const slug of ['alpha', 'beta', 'gamma']) {
      const positions = [...balances]
        .filter(([k, b]) => k.startsWith(`${slug}|`) && b > 0n)
        .map(([k, b]) => {
          const [, chain, user] = k.split('|');
          // holderSince: the last transfer that took this balance from <= 0 to > 0
          let run = 0n;
          let since = 0;
          for (const t of transfers.filter((t) => t.vault === slug && t.chainId === Number(chain))) {
            const before = run;
            if (t.from === user) run -= BigInt(t.amount);
            if (t.to === user) run += BigInt(t.amount);
            if (before <= 0n && run > 0n) since = t.blockTimestamp;
          }
          return {
            chainId: Number(chain),
            user,
            raw: b,
            balance: units(b, decimalsOn(slug, Number(chain))),
            holderSince: since,
          };
        })
        .sort((a, b) => {
          const sa = a.raw * 10n ** BigInt(36 - decimalsOn(slug, a.chainId));
          const sb = b.raw * 10n ** BigInt(36 - decimalsOn(slug, b.chainId));
          return sa !== sb ? (sa > sb ? -1 : 1) : a.chainId - b.chainId || (a.user < b.user ? -1 : 1);
        })
        .slice(0, 100)
        .map(({ raw: _, ...rest }) => rest);
      const distinct = new Set(
        [...balances].filter(([k, b]) => k.startsWith(`${slug}|`) && b > 0n).map(([k]) => k.split('|')[2]),
      );
      const got = res.body.data.find(
        (d: { vaultAddress: string }) => d.vaultAddress === vault(slug).record.vaultAddress,
      );
      expect(got).toEqual({
        vaultAddress: vault(slug).record.vaultAddress,
        totalHolders: distinct.size,
        holders: positions,
      });
    }
  });

  it('filters by chain and by status (default active only)', async () => {
    const all = await api.request('/v1/vaults/holders');
    expect(all.body.data.map((d: { vaultAddress: string }) => d.vaultAddress)).toEqual([
      vault('alpha').record.vaultAddress,
      vault('beta').record.vaultAddress,
    ]);
    const sol = await api.request('/v1/vaults/holders?chainId=101');
    const alpha = sol.body.data[0];
    const expected = [...balancesAt(s)].filter(([k, b]) => k.startsWith('alpha|101|') && b > 0n);
    expect(alpha.holders).toHaveLength(expected.length);
    expect(alpha.holders.every((h: { chainId: number }) => h.chainId === 101)).toBe(true);
    expect(sol.body.data[1].holders).toEqual([]);
    const bad = await api.request('/v1/vaults/holders?chainId=abc');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe('chainId');
  });
});

/** Holder count of (slug, chain) at time `t` (inclusive), from the events. */
function holdersAt(slug: string, chainId: number, t: number): number {
  const b = balancesAt(s, t);
  return [...b].filter(([k, v]) => k.startsWith(`${slug}|${chainId}|`) && v > 0n).length;
}

describe('GET /v1/vaults/{slug}/holders-history', () => {
  it('samples every hour of a day: start/end/min/max/average/count', async () => {
    const chainTransfers = canonical(s.transfers).filter((t) => t.vault === 'alpha' && t.chainId === 1);
    const firstDay = Math.floor(Math.min(...chainTransfers.map((t) => t.blockTimestamp)) / DAY) * DAY;
    const lastFull = Math.floor(NOW / DAY) * DAY - DAY;
    const res = await api.request(
      `/v1/vaults/alpha/holders-history?startDate=${firstDay}&endDate=${lastFull}`,
    );
    expect(res.status).toBe(200);
    responseBodies['GET /vaults/{slug}/holders-history'].parse(res.body);
    const got = res.body.data.history.filter((h: { chainId: number }) => h.chainId === 1);
    const expected: HolderHistoryEntry[] = [];
    for (let day = firstDay; day <= lastFull; day += DAY) {
      const samples = Array.from({ length: 24 }, (_, h) => holdersAt('alpha', 1, day + (h + 1) * HOUR - 1));
      expected.push({
        day,
        chainId: 1,
        start: holdersAt('alpha', 1, day - 1),
        end: samples[23],
        min: Math.min(...samples),
        max: Math.max(...samples),
        average: samples.reduce((a, b) => a + b, 0) / 24,
        count: 24,
      });
    }
    expect(got).toHaveLength(expected.length);
    got.forEach((g: (typeof expected)[number], i: number) => {
      expect({ ...g, average: 0 }).toEqual({ ...expected[i], average: 0 });
      expect(g.average).toBeCloseTo(expected[i].average, 9);
    });
    // Days are ascending; chains 98866, 1 and 101 all appear over the whole history.
    const all = await api.request('/v1/vaults/alpha/holders-history');
    const days = all.body.data.history.map((h: { day: number }) => h.day);
    expect(days).toEqual([...days].sort((a, b) => a - b));
    expect(new Set(all.body.data.history.map((h: { chainId: number }) => h.chainId))).toEqual(
      new Set([98866, 1, 101]),
    );
    expect(Math.max(...days)).toBe(Math.floor(NOW / DAY) * DAY); // endDate defaults to now
  });

  it('404 for an unknown slug, 400 for a bad range', async () => {
    const nf = await api.request('/v1/vaults/nope/holders-history');
    expect(nf.status).toBe(404);
    expect(nf.body.code).toBe('NOT_FOUND');
    const bad = await api.request('/v1/vaults/alpha/holders-history?startDate=10&endDate=5');
    expect(bad.status).toBe(400);
  });
});

describe('GET /v1/vaults/holders-history', () => {
  it('answers per vault of the status filter, the same entries as the per-slug endpoint', async () => {
    const q = `startDate=${NOW - 10 * DAY}&endDate=${NOW}`;
    const all = await api.request(`/v1/vaults/holders-history?status=all&${q}`);
    expect(all.status).toBe(200);
    expect(all.body.data.map((d: { vaultAddress: string }) => d.vaultAddress)).toEqual(
      ['alpha', 'beta', 'gamma'].map((v) => vault(v).record.vaultAddress),
    );
    const one = await api.request(`/v1/vaults/beta/holders-history?${q}`);
    expect(all.body.data[1]).toEqual(one.body.data);
    const gammaEnd = all.body.data[2].history.at(-1);
    expect(gammaEnd.end).toBe(holdersAt('gamma', gammaEnd.chainId, gammaEnd.day + DAY - 1));
    const active = await api.request(`/v1/vaults/holders-history?${q}`);
    expect(active.body.data).toHaveLength(2);
  });
});
