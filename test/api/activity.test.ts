/**
 * The activity endpoints (recent transactions, failed redemptions, role assignments)
 * over the activity scenario replayed into chDB; expected values come from its events.
 */
import { describe, expect, it } from 'vitest';
import { responseBodies } from '../../api/http/responses.ts';
import { type ActivityScenario, NOW } from '../support/activity-scenario.ts';
import { balancesAt, canonical, units } from '../support/activity-truth.ts';
import { useActivityApi } from '../support/api-fixture.ts';
import { DAY } from '../support/events.ts';

const { s, api, vault } = useActivityApi();

/** The expected recent transactions of `slug`: newest first, at most `limit`. */
function expectedTransactions(slug: string, limit: number, chainId?: number) {
  const v = vault(slug).record;
  const rows = canonical(s.activity)
    .filter((a) => a.vault === slug && (chainId === undefined || a.chainId === chainId))
    .sort(
      (a, b) =>
        b.blockTimestamp - a.blockTimestamp || b.blockNumber - a.blockNumber || b.logIndex - a.logIndex,
    );
  return {
    vaultAddress: v.vaultAddress,
    transactionCount7d: rows.filter((a) => a.blockTimestamp > NOW - 7 * DAY && a.blockTimestamp <= NOW)
      .length,
    recentTransactions: rows.slice(0, limit).map((a) => ({
      transactionHash: a.txHash,
      logIndex: a.logIndex,
      transactionType: a.kind,
      vaultAddress: v.vaultAddress,
      user: a.user,
      createdAt: a.blockTimestamp,
      shares: units(BigInt(a.shares), v.decimals),
      sharesTokenAddress: a.sharesToken,
      assets: units(BigInt(a.assets), a.assetsDecimals),
      assetsTokenAddress: a.assetsToken,
      chainId: a.chainId,
    })),
  };
}

describe('GET /v1/vaults/recent-transactions', () => {
  it('defaults to 10 per vault, newest first, with the 7-day count of every type', async () => {
    const res = await api.request('/v1/vaults/recent-transactions');
    expect(res.status).toBe(200);
    responseBodies['GET /vaults/recent-transactions'].parse(res.body);
    expect(res.body.data).toEqual([expectedTransactions('alpha', 10), expectedTransactions('beta', 10)]);
    const kinds = new Set(canonical(s.activity).map((a) => a.kind));
    expect(kinds.size).toBe(6);
  });

  it('applies limit and chainId, and rejects a limit out of 1..100', async () => {
    const res = await api.request('/v1/vaults/recent-transactions?limit=3&chainId=1');
    expect(res.body.data).toEqual([expectedTransactions('alpha', 3, 1), expectedTransactions('beta', 3, 1)]);
    const all = await api.request('/v1/vaults/recent-transactions?limit=100');
    expect(all.body.data[0].recentTransactions).toHaveLength(
      expectedTransactions('alpha', 100).recentTransactions.length,
    );
    for (const bad of ['limit=0', 'limit=101', 'limit=x', 'chainId=-1']) {
      const r = await api.request(`/v1/vaults/recent-transactions?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.details[0].path).toBe(bad.split('=')[0]);
    }
  });

  it('live=false and status select the vaults', async () => {
    const off = await api.request('/v1/vaults/recent-transactions?live=false');
    expect(off.body.data).toEqual([
      { vaultAddress: vault('gamma').record.vaultAddress, transactionCount7d: 0, recentTransactions: [] },
    ]);
    const st = await api.request('/v1/vaults/recent-transactions?status=all&live=false');
    expect(st.body.data).toHaveLength(3);
  });
});

/** The failed redemptions of alpha by the DESIGN rule, computed from the events. */
function expectedFailed(filter: {
  start: number;
  end?: number;
  user?: string;
  chainId?: number;
  queue?: string;
}) {
  const byRequest = new Map<string, ReturnType<typeof canonical<ActivityScenario['redemptions'][number]>>>();
  for (const r of canonical(s.redemptions)) {
    const k = `${r.chainId}|${r.queue}|${r.requestId}`;
    byRequest.set(k, [...(byRequest.get(k) ?? []), r]);
  }
  const out = [];
  for (const events of byRequest.values()) {
    const ordered = [...events].sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    const last = ordered.filter((e) => e.kind === 'REQUEST').at(-1);
    if (!last || BigInt(last.amount) === 0n) continue;
    if (ordered.some((e) => e.kind !== 'REQUEST' && e.blockNumber > last.blockNumber)) continue;
    if (last.deadline > NOW || last.deadline < filter.start) continue;
    if (filter.end !== undefined && last.deadline > filter.end) continue;
    if (filter.user && last.user !== filter.user) continue;
    if (filter.chainId && last.chainId !== filter.chainId) continue;
    if (filter.queue && last.queue !== filter.queue) continue;
    const held = balancesAt(s, last.deadline).get(`alpha|${last.chainId}|${last.user}`) ?? 0n;
    out.push({
      requestTransactionHash: last.txHash,
      user: last.user,
      chainId: last.chainId,
      amount: units(BigInt(last.amount), 6),
      requestedAt: last.blockTimestamp,
      expiresAt: last.deadline,
      queueAddress: last.queue,
      wantTokenContractAddress: last.wantToken,
      minPrice: units(BigInt(last.minPrice), last.wantDecimals),
      isValid: held >= BigInt(last.amount),
    });
  }
  return out.sort((a, b) => b.expiresAt - a.expiresAt);
}

describe('GET /v1/vaults/{slug}/failed-redemptions', () => {
  it('lists expired unfilled requests of the last 30 days with isValid at the deadline', async () => {
    const res = await api.request('/v1/vaults/alpha/failed-redemptions');
    expect(res.status).toBe(200);
    responseBodies['GET /vaults/{slug}/failed-redemptions'].parse(res.body);
    const expected = expectedFailed({ start: NOW - 30 * DAY });
    expect(res.body.data).toEqual({
      vaultAddress: vault('alpha').record.vaultAddress,
      failedRedemptions: expected,
    });
    // the scenario has both outcomes, and the moved-away request is invalid although held now
    expect(expected.map((f) => f.isValid).sort()).toEqual([false, false, true]);
  });

  it('filters by date range, user, chain and queue', async () => {
    const [, q2] = s.queues;
    const h4 = s.redeemers[1];
    const cases: [string, Parameters<typeof expectedFailed>[0]][] = [
      [`startDate=${NOW - 50 * DAY}`, { start: NOW - 50 * DAY }],
      [`startDate=${NOW - 50 * DAY}&endDate=${NOW - 7 * DAY}`, { start: NOW - 50 * DAY, end: NOW - 7 * DAY }],
      [`user=${h4.toUpperCase().replace('0X', '0x')}`, { start: NOW - 30 * DAY, user: h4 }],
      ['chainId=1', { start: NOW - 30 * DAY, chainId: 1 }],
      [`queueAddress=${q2}&startDate=0`, { start: 0, queue: q2 }],
    ];
    for (const [q, f] of cases) {
      const res = await api.request(`/v1/vaults/alpha/failed-redemptions?${q}`);
      expect(res.body.data.failedRedemptions, q).toEqual(expectedFailed(f));
      expect(res.body.data.failedRedemptions.length, q).toBeGreaterThan(0);
    }
  });

  it('404 for an unknown slug, 400 for bad parameters', async () => {
    expect((await api.request('/v1/vaults/nope/failed-redemptions')).status).toBe(404);
    for (const bad of ['user=xyz', 'queueAddress=0xZZ', 'startDate=-1', 'startDate=9&endDate=8']) {
      const r = await api.request(`/v1/vaults/alpha/failed-redemptions?${bad}`);
      expect(r.status, bad).toBe(400);
    }
  });
});

describe('GET /v1/vaults/{slug}/roles-assignments', () => {
  const NEST: Record<number, string> = {
    0: 'OWNER',
    1: 'STRATEGIST',
    2: 'MANAGER',
    3: 'TELLER',
    14: 'KEEPER',
  };
  const expectedRoles = (slug: string, names: (id: number) => string) => {
    const latest = new Map<string, ActivityScenario['roles'][number]>();
    for (const r of canonical(s.roles)
      .filter((r) => r.vault === slug)
      .sort((a, b) => a.blockTimestamp - b.blockTimestamp || a.blockNumber - b.blockNumber))
      latest.set(`${r.chainId}|${r.user}|${r.role}`, r);
    return [...latest.values()]
      .sort((a, b) => a.chainId - b.chainId || (a.user < b.user ? -1 : a.user > b.user ? 1 : a.role - b.role))
      .map((r) => ({
        vaultAddress: vault(slug).record.vaultAddress,
        user: r.user,
        role: names(r.role),
        enabled: r.enabled,
        chainId: r.chainId,
      }));
  };

  it('answers the latest state per (chain, user, role), Nest names by default, ROLE_<n> otherwise', async () => {
    const res = await api.request('/v1/vaults/alpha/roles-assignments');
    expect(res.status).toBe(200);
    responseBodies['GET /vaults/{slug}/roles-assignments'].parse(res.body);
    const expected = expectedRoles('alpha', (id) => NEST[id] ?? `ROLE_${id}`);
    expect(res.body.data).toEqual({
      vaultAddress: vault('alpha').record.vaultAddress,
      roleAssignments: expected,
      pageInfo: { endCursor: null, hasNextPage: false },
    });
    expect(expected.map((r) => r.role)).toContain('ROLE_99');
    expect(expected.find((r) => r.chainId === 98866 && r.role === 'STRATEGIST')?.enabled).toBe(false);
    expect(expected.find((r) => r.role === 'TELLER')?.enabled).toBe(true); // the retracted revoke is gone
  });

  it("uses the vault's own role map and ignores the legacy limit/cursor", async () => {
    const map: Record<number, string> = { 1: 'CURATOR', 3: 'TELLER' };
    const res = await api.request('/v1/vaults/beta/roles-assignments?limit=1&cursor=abc');
    expect(res.body.data.roleAssignments).toEqual(expectedRoles('beta', (id) => map[id] ?? `ROLE_${id}`));
    expect(res.body.data.roleAssignments.map((r: { role: string }) => r.role)).toEqual(['CURATOR', 'ROLE_2']);
    expect((await api.request('/v1/vaults/nope/roles-assignments')).status).toBe(404);
  });
});
