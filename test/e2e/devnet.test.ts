/**
 * The whole system on the local devnet: `vaultstream start` with `devnet.enabled`
 * starts three anvil chains, deploys the contracts, backfills days of simulated
 * history, then ingests it (EVM ingester -> bus -> consumers -> chDB views) and serves
 * the API. Once ingestion is live and the consumers drained, every number the API
 * answers is compared with the simulator's ground truth (test/support/devnet-truth.ts),
 * up to float conversion at output only. That run has no live ticks, so the truth
 * file describes the final chain state exactly. A second, short run goes live until
 * the primary chain's reorg: the orphaned transactions are served, then retracted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  getFreshTokenHolders,
  getJson,
  killServices,
  type Service,
  startService,
  stderrTail,
  waitDrained,
} from '../support/devnet-service.ts';
import * as T from '../support/devnet-truth.ts';

const BACKFILL_DAYS = 9;
/** The run of the 30-day windows (compositionApy and navApy rolling30d, sec30d): more than 30 days. */
const BACKFILL_30D_DAYS = 33;
const DAY = 86_400;
/** The devnet registry sets no prices: the base asset and USDC stand-in default to 1 USD. */
const USD_PER_ASSET = 1;
/** API bodies, checked field by field below. */
type Json = any;

const dir = mkdtempSync(join(tmpdir(), 'vs-e2e-devnet-'));
afterAll(() => {
  killServices();
  // A killed service's analysts process exits when it sees its parent gone: it may still write.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

let svc: Service;
const get = (path: string, on: Service = svc): Promise<Json> => getJson(on, path);
let truth: T.GroundTruthJson;
let vaults: T.TruthVault[];
let nowSec = 0;

const vaultEntry = (data: Json[], v: T.TruthVault) => {
  const e = data.find((x) => T.lc(x.vaultAddress) === v.share);
  expect(e, `vault ${v.slug} in the response`).toBeDefined();
  return e;
};

/**
 * apy-history from the deployment day: on every settled day, every vault's `apy` is its
 * `compositionApy` and both equal the truth's (null where the truth's is); rolling7d is
 * known from the 8th day on, and with `full30d` (a backfill longer than 30 days) the
 * 30-day members on the last days too.
 */
async function expectCompositionApy(on: Service, truth: T.GroundTruthJson, full30d: boolean) {
  const first = T.deploymentDay(truth);
  const start = Date.parse(`${first}T00:00:00Z`) / 1000;
  const { data } = await get(`/v1/vaults/apy-history?status=all&order=asc&startDate=${start}`, on);
  for (const v of T.truthVaults(truth)) {
    const history: Json[] = vaultEntry(data, v).history;
    expect(history.length, `${v.slug} settled days`).toBeGreaterThan(0);
    let r7 = 0;
    for (const h of history) {
      const day = T.utcDay(h.day);
      const want = T.compositionApyOf(truth, v, day);
      expect(h.apy, `${v.slug} ${day} apy = compositionApy`).toEqual(h.compositionApy);
      for (const k of ['rolling7d', 'rolling30d', 'sec30d'] as const) {
        const expected = want?.[k] ?? null;
        const what = `${v.slug} ${day} compositionApy.${k}`;
        if (expected === null) expect(h.compositionApy[k], what).toBeNull();
        else T.expectClose(h.compositionApy[k], expected, what);
      }
      if (want?.rolling7d != null) r7++;
    }
    // The strategist buys on the first simulated day: from its 8th day on, rolling7d is known.
    expect(r7, `${v.slug}: days with a rolling7d compositionApy`).toBeGreaterThanOrEqual(history.length - 8);
    if (full30d)
      expect(
        history.filter((h) => h.compositionApy.rolling30d !== null && h.compositionApy.sec30d !== null)
          .length,
        `${v.slug}: days with a 30-day compositionApy`,
      ).toBeGreaterThan(0);
  }
}

describe('vaultstream start on the devnet, against the ground truth', () => {
  beforeAll(async () => {
    svc = await startService(join(dir, 'backfill'), {
      backfillDays: String(BACKFILL_DAYS),
      liveIntervalMs: '0',
    });
    await waitDrained(svc);
    truth = T.readTruth(svc.truthFile);
    vaults = T.truthVaults(truth);
    nowSec = Math.floor(Date.now() / 1000);
  }, 200_000);

  it('ingests every chain up to its head', async () => {
    const s = await get('/status');
    for (const [chainId, client] of svc.rpc) {
      const head = Number(await client.getBlockNumber());
      expect(
        s.chains.find((c: Json) => c.chainId === chainId)?.blockNumber,
        `chain ${chainId} watermark`,
      ).toBe(head);
    }
  });

  it('every event the ingester reads is stored: /status lists nothing unpublished on any chain', async () => {
    const s = await get('/status');
    const evm = s.ingest.evm as Json[];
    expect(evm.map((c) => c.chainId).sort()).toEqual([...svc.rpc.keys()].sort());
    for (const c of evm) expect(c.unpublished, `chain ${c.chainId}`).toEqual({});
  });

  it('top holders per chain and their balances (/v1/vaults/holders)', async () => {
    const { data } = await get('/v1/vaults/holders?status=all');
    for (const v of vaults) {
      const e = vaultEntry(data, v);
      expect(e.totalHolders, `${v.slug} totalHolders`).toBe(T.holderCount(truth, v));
      T.expectTopHolders(e.holders, T.chainBalances(truth, v), v.slug);
    }
    for (const chainId of truth.chainIds) {
      const perChain = await get(`/v1/vaults/holders?status=all&chainId=${chainId}`);
      for (const v of vaults)
        T.expectTopHolders(
          vaultEntry(perChain.data, v).holders,
          T.chainBalances(truth, v).filter((b) => b.chainId === chainId),
          `${v.slug}@${chainId}`,
        );
    }
  });

  it('token holders: balance summed over chains, USD value (/v1/token-holders)', async () => {
    const { data } = await getFreshTokenHolders(svc);
    const expected = T.tokenHolderBalances(truth);
    expect(data.count).toBe(expected.size);
    expect(data.holders).toHaveLength(expected.size);
    const price = new Map(vaults.map((v) => [v.share, T.latestRate(truth, v, truth.chainIds[0])]));
    // The Solana mint of vault 0 is priced as its share.
    if (truth.solana) price.set(T.lc(truth.solana.mint), T.latestRate(truth, vaults[0], truth.chainIds[0]));
    for (const h of data.holders) {
      const key = `${T.lc(h.address)}|${T.lc(h.tokenAddress)}`;
      const raw = expected.get(key);
      expect(raw, `unexpected token holder ${key}`).toBeDefined();
      T.expectClose(h.balance, T.units(raw as bigint), `${key} balance`);
      const rate = price.get(T.lc(h.tokenAddress)) as bigint;
      T.expectClose(h.value, T.units((raw as bigint) * rate, 2 * T.DECIMALS) * USD_PER_ASSET, `${key} value`);
    }
    for (let i = 1; i < data.holders.length; i++) {
      const [a, b] = [data.holders[i - 1], data.holders[i]];
      expect(a.value > b.value || (a.value === b.value && a.address <= b.address), `order at ${i}`).toBe(
        true,
      );
    }
  });

  it('the Solana side: chain 101 holders of the mint, as the truth books them', async () => {
    const sol = truth.solana;
    expect(sol, 'the truth has a Solana side').toBeDefined();
    const s = sol as NonNullable<typeof sol>;
    expect(Object.keys(s.balances).length, 'Solana holders').toBeGreaterThan(1);
    expect(s.transfers, 'Solana transfers').toBeGreaterThan(0);
    const v0 = vaults[0];
    await vi.waitFor(
      async () => {
        const { data } = await get(`/v1/vaults/holders?status=all&chainId=101`);
        const e = data.find((x: Json) => T.lc(x.vaultAddress) === v0.share);
        expect(e?.holders?.length, `chain 101 holders in the views; ${stderrTail(svc)}`).toBe(
          Object.keys(s.balances).length,
        );
      },
      { timeout: 60_000, interval: 300 },
    );
    const { data } = await get(`/v1/vaults/holders?status=all&chainId=101`);
    T.expectTopHolders(
      vaultEntry(data, v0).holders,
      T.chainBalances(truth, v0).filter((b) => b.chainId === 101),
      `${v0.slug}@101`,
    );
  });

  it('every mint flow of the truth, refunds included, answers its step sequence (/v1/solana/mint-status)', async () => {
    const flows = T.mintFlows(truth);
    expect(flows.length, 'mint flows in the truth').toBeGreaterThan(0);
    expect(
      flows.some((f) => f.refunded),
      'a refunded flow in the truth',
    ).toBe(true);
    const statusOf = async (sig: string) => {
      const res = await fetch(`${svc.api}/v1/solana/mint-status/${sig}`);
      return res.status === 200 ? ((await res.json()) as Json).data : undefined;
    };
    for (const f of flows) {
      const want = Object.fromEntries(
        ['solana', 'cctpAttestation', 'predicate', 'relay', 'composer', 'oft', 'solanaMint', 'reclaim'].map(
          (step) => [step, f.steps[step] ?? 'pending'],
        ),
      );
      const status = await vi.waitFor(
        async () => {
          const d = await statusOf(f.signature);
          expect(d, `mint flow ${f.signature}; ${stderrTail(svc)}`).toBeDefined();
          const got = Object.fromEntries(
            Object.entries(d.steps as Json).map(([k, x]) => [k, (x as Json).status]),
          );
          expect(got, `steps of ${f.signature}`).toEqual(want);
          return d;
        },
        { timeout: 60_000, interval: 300 },
      );
      expect(status.overallStatus, `overall ${f.signature}`).toBe(f.refunded ? 'refunded' : 'completed');
      expect(status.steps.relay.txHash?.toLowerCase(), `relay tx ${f.signature}`).toBe(
        f.relayTx.toLowerCase(),
      );
      if (!f.refunded) {
        expect(status.steps.solanaMint.signature, `Solana mint ${f.signature}`).toBe(f.mintSignature);
        expect(status.steps.oft.lzGuid, `guid ${f.signature}`).toBe(f.guid);
      }
    }
  }, 180_000);

  it('tvl, tokenPrice and holder counts (/v1/vaults/details, /v1/vaults)', async () => {
    const details = (await get('/v1/vaults/details?status=all')).data;
    const list = (await get('/v1/vaults?status=all')).data;
    for (const v of vaults) {
      const tvl = T.units(T.tvlRaw(truth, v), 2 * T.DECIMALS) * USD_PER_ASSET;
      const d = vaultEntry(details, v);
      T.expectClose(d.tvl, tvl, `${v.slug} details tvl`);
      T.expectClose(d.tokenPrice, T.tokenPrice(truth, v), `${v.slug} tokenPrice`);
      expect(d.holders, `${v.slug} holders`).toBe(T.holderCount(truth, v));
      const l = vaultEntry(list, v);
      T.expectClose(l.tvl, tvl, `${v.slug} list tvl`);
      expect(l.numHolders, `${v.slug} numHolders`).toBe(T.holderCount(truth, v));
    }
  });

  it('navApy per settled day over the known rate path, every chain (/v1/vaults/apy-history)', async () => {
    const first = T.deploymentDay(truth);
    const yesterday = T.utcDay(nowSec - DAY);
    const start = Date.parse(`${first}T00:00:00Z`) / 1000;
    for (const chainId of truth.chainIds) {
      const { data } = await get(
        `/v1/vaults/apy-history?status=all&order=asc&chainId=${chainId}&startDate=${start}`,
      );
      for (const v of vaults) {
        const history: Json[] = vaultEntry(data, v).history;
        const days = history.map((h) => T.utcDay(h.day));
        // Every day from the deployment to yesterday is settled; today never is.
        expect(days, `${v.slug}@${chainId} settled days`).toEqual(T.daysFrom(first, yesterday));
        for (const h of history) {
          const day = T.utcDay(h.day);
          const what = `${v.slug}@${chainId} ${day} navApy`;
          for (const [k, expected] of [
            ['rolling7d', T.navRolling(truth, v, chainId, day, 7)],
            ['rolling30d', T.navRolling(truth, v, chainId, day, 30)],
            ['sec30d', T.navSec30d(truth, v, chainId, day)],
          ] as const)
            if (expected === null) expect(h.navApy[k], `${what}.${k}`).toBeNull();
            else T.expectClose(h.navApy[k], expected, `${what}.${k}`);
        }
      }
    }
  });

  it('fees per day: charged, claimed, and accrued over each claimed period (/v1/vaults/fees)', async () => {
    const from = T.deploymentDay(truth);
    const to = T.utcDay(nowSec);
    const { data } = await get(`/v1/vaults/fees?startDate=${from}&endDate=${to}`);
    for (const v of vaults) {
      const e = data.find((x: Json) => x.slug === v.slug);
      expect(e, `fees of ${v.slug}`).toBeDefined();
      const series: [string, Map<string, bigint>][] = [
        ['depositFee', T.feesByDay(truth, v, 'deposit')],
        ['instantRedemptionFee', T.feesByDay(truth, v, 'instantRedemption')],
        ['redemptionFee', T.feesByDay(truth, v, 'redemption')],
        ['feesClaimed', T.feesClaimedByDay(truth, v)],
      ];
      for (const [name, byDay] of series) {
        const points: Json[] = e[name];
        expect(
          points.map((p) => p.date),
          `${v.slug} ${name} days`,
        ).toEqual(T.daysFrom(from, to));
        for (const p of points)
          T.expectClose(
            p.value,
            T.units(byDay.get(p.date) ?? 0n) * USD_PER_ASSET,
            `${v.slug} ${name} ${p.date}`,
          );
        expect(
          [...byDay.values()].some((x) => x > 0n),
          `${v.slug}: the truth books ${name}`,
        ).toBe(true);
      }
      // Accrual is the chain's: over a closed period it adds up to what the claim took.
      const accrued = new Map<string, number>();
      for (const name of ['managementFee', 'performanceFee'])
        for (const p of e[name] as Json[]) accrued.set(p.date, (accrued.get(p.date) ?? 0) + p.value);
      const periods = T.accrualPeriods(truth, v);
      expect(periods.length, 'a claim within the backfill').toBeGreaterThan(0);
      for (const { days, claimed } of periods)
        T.expectClose(
          days.reduce((sum, d) => sum + (accrued.get(d) ?? 0), 0),
          T.units(claimed) * USD_PER_ASSET,
          `${v.slug} fees accrued ${days[0]}..${days.at(-1)}`,
        );
    }
  });

  it('compositionApy (and apy) per settled day from the yield assets, as the truth computes it', () =>
    expectCompositionApy(svc, truth, false));

  it('performance-history: yield asset prices, weights and apy per day against the truth', async () => {
    const first = T.deploymentDay(truth);
    const start = Date.parse(`${first}T00:00:00Z`) / 1000;
    const primary = truth.chainIds[0];
    for (const v of vaults) {
      const { data } = await get(
        `/v1/vaults/${v.slug}/performance-history?startDate=${start}&includeCompositeAssets=true`,
      );
      let weighed = 0;
      for (const h of data.history as Json[]) {
        const day = T.utcDay(h.day);
        const price = T.closeRate(truth, v, primary, day);
        if (price !== undefined) T.expectClose(h.vault.price, T.units(price), `${v.slug} ${day} price`);
        const want = T.compositionApyOf(truth, v, day);
        if (h.vault.apy !== null)
          for (const k of ['rolling7d', 'rolling30d', 'sec30d'] as const)
            if (want?.[k] == null) expect(h.vault.apy[k], `${v.slug} ${day} apy.${k}`).toBeNull();
            else T.expectClose(h.vault.apy[k], want[k] as number, `${v.slug} ${day} apy.${k}`);
        if (!want) continue;
        const assets = h.assets as Record<string, Json>;
        const total = Object.values(assets).reduce((a, x) => a + x.compositionPct, 0);
        for (const [slug, w] of Object.entries(want.weights)) {
          const close = T.yieldClose(truth, slug, day);
          if (close === undefined) continue;
          expect(assets[slug], `${v.slug} ${day} asset ${slug}`).toBeDefined();
          T.expectClose(assets[slug].price, close, `${v.slug} ${day} ${slug} price`);
          // compositionPct counts the liquid assets too; renormalised over the yield assets it is the weight.
          if (w > 0) {
            T.expectClose((assets[slug].compositionPct / total) * 100, w, `${v.slug} ${day} ${slug} weight`);
            weighed++;
          } else expect(assets[slug].compositionPct, `${v.slug} ${day} ${slug} weight`).toBe(0);
        }
      }
      expect(weighed, `${v.slug}: days with a weighted yield asset`).toBeGreaterThan(0);
    }
  });

  it('the Nest hub vault: price, navApy and accrued fees (management + performance) per day as the truth books them', async () => {
    const hub = vaults.filter(T.isHubVault);
    expect(hub.map((v) => v.slug)).toEqual(['ndev2']);
    const v = hub[0];
    const from = T.deploymentDay(truth);
    const to = T.utcDay(nowSec);
    const start = Date.parse(`${from}T00:00:00Z`) / 1000;
    const primary = truth.chainIds[0];
    const { data: perf } = await get(`/v1/vaults/${v.slug}/performance-history?startDate=${start}`);
    let settled = 0;
    for (const h of perf.history as Json[]) {
      const day = T.utcDay(h.day);
      T.expectClose(
        h.vault.price,
        T.units(T.closeRate(truth, v, primary, day) ?? 0n),
        `${v.slug} ${day} price`,
      );
      if (h.vault.navApy === null) continue;
      settled++;
      for (const [k, expected] of [
        ['rolling7d', T.navRolling(truth, v, primary, day, 7)],
        ['rolling30d', T.navRolling(truth, v, primary, day, 30)],
        ['sec30d', T.navSec30d(truth, v, primary, day)],
      ] as const)
        if (expected === null) expect(h.vault.navApy[k], `${v.slug} ${day} navApy.${k}`).toBeNull();
        else T.expectClose(h.vault.navApy[k], expected, `${v.slug} ${day} navApy.${k}`);
    }
    expect(settled, 'settled days of the hub vault').toBeGreaterThan(0);
    // The hub's net rate moves with its gross rate less the fees: not the legacy path's constant steps.
    expect(T.latestRate(truth, v, primary)).not.toBe(v.startingRate);
    const { data } = await get(`/v1/vaults/fees?startDate=${from}&endDate=${to}`);
    const e = data.find((x: Json) => x.slug === v.slug);
    const management = T.feesByDay(truth, v, 'accountantManagement');
    const performance = T.feesByDay(truth, v, 'accountantPerformance');
    for (const [kind, booked] of [
      ['management', management],
      ['performance', performance],
    ] as const)
      expect(
        [...booked.values()].some((x) => x > 0n),
        `the truth books hub ${kind} fees`,
      ).toBe(true);
    // Each kind on its own: a performance fee reported as management would fail both series.
    for (const [name, booked] of [
      ['managementFee', management],
      ['performanceFee', performance],
    ] as const) {
      const series = e[name] as Json[];
      expect(series.map((p) => p.date)).toEqual(T.daysFrom(from, to));
      for (const p of series)
        T.expectClose(
          p.value,
          T.units(booked.get(p.date) ?? 0n) * USD_PER_ASSET,
          `${v.slug} ${name} ${p.date}`,
        );
    }
  });

  it('failed redemptions with isValid read from the chain at the deadline', async () => {
    const since = truth.from - DAY;
    let seen = 0;
    for (const v of vaults) {
      const { data } = await get(`/v1/vaults/${v.slug}/failed-redemptions?startDate=${since}`);
      expect(T.lc(data.vaultAddress)).toBe(v.share);
      const want = [];
      for (const r of T.failedRequests(truth, v, nowSec)) {
        const held = await T.balanceAtTime(
          svc.rpc.get(r.chainId) as PublicClient,
          r.share,
          r.user,
          r.deadline,
        );
        want.push({
          chainId: r.chainId,
          user: T.lc(r.user),
          queueAddress: T.lc(r.queue),
          wantTokenContractAddress: T.lc(r.want),
          requestedAt: r.requestedAt,
          expiresAt: r.deadline,
          amount: T.units(BigInt(r.amount)),
          minPrice: T.units(BigInt(r.atomicPrice)),
          isValid: held >= BigInt(r.amount),
        });
      }
      seen += want.length;
      const got = (data.failedRedemptions as Json[]).map((f) => ({
        chainId: f.chainId,
        user: T.lc(f.user),
        queueAddress: T.lc(f.queueAddress),
        wantTokenContractAddress: T.lc(f.wantTokenContractAddress),
        requestedAt: f.requestedAt,
        expiresAt: f.expiresAt,
        amount: f.amount,
        minPrice: f.minPrice,
        isValid: f.isValid,
      }));
      T.expectSameRecords(got, want, ['amount', 'minPrice'], `${v.slug} failed redemptions`);
    }
    expect(seen, 'the truth has expired requests to compare').toBeGreaterThan(0);
  });

  it('role assignments: the latest state per (chain, user, role)', async () => {
    for (const v of vaults) {
      const { data } = await get(`/v1/vaults/${v.slug}/roles-assignments`);
      expect(data.pageInfo).toEqual({ endCursor: null, hasNextPage: false });
      const got = (data.roleAssignments as Json[]).map((r) => {
        expect(T.lc(r.vaultAddress)).toBe(v.share);
        return { chainId: r.chainId, user: T.lc(r.user), role: r.role, enabled: r.enabled };
      });
      expect(got.sort(T.byKey), `${v.slug} roles`).toEqual(T.expectedRoles(truth, v));
    }
  });

  it('recent transactions: redemption requests and bridges as booked, 7-day counts', async () => {
    const { data } = await get('/v1/vaults/recent-transactions?status=all&limit=100');
    const composer = T.lc(truth.addresses.composer);
    for (const v of vaults) {
      const e = vaultEntry(data, v);
      const rows: Json[] = e.recentTransactions;
      for (let i = 1; i < rows.length; i++)
        expect(rows[i - 1].createdAt).toBeGreaterThanOrEqual(rows[i].createdAt);
      // A full page hides older rows: compare only what is strictly newer than its oldest.
      const cutoff = rows.length === 100 ? Math.min(...rows.map((r) => r.createdAt)) : -1;
      const got: T.TimedActivity[] = rows
        .filter((r) => ['REDEEM_REQUEST', 'BRIDGE_IN', 'BRIDGE_OUT'].includes(r.transactionType))
        // The mint flow's OFT send to Solana (from the composer) is not a devnet bridge.
        .filter((r) => !(r.transactionType === 'BRIDGE_OUT' && T.lc(r.user) === composer))
        .filter((r) => r.createdAt > cutoff)
        .map((r) => ({
          type: r.transactionType,
          chainId: r.chainId,
          user: T.lc(r.user),
          shares: r.shares,
          createdAt: r.createdAt,
        }));
      const want = T.timedActivity(truth, v).filter((a) => a.createdAt > cutoff);
      for (const type of ['REDEEM_REQUEST', 'BRIDGE_IN', 'BRIDGE_OUT'])
        T.expectSameRecords(
          got.filter((a) => a.type === type),
          want.filter((a) => a.type === type),
          ['shares'],
          `${v.slug} ${type}`,
        );
      for (const r of rows) {
        expect(T.lc(r.vaultAddress)).toBe(v.share);
        expect(T.lc(r.sharesTokenAddress)).toBe(v.share);
      }
      // The truth times only part of the activity: its last 7 x 24 h are a lower bound.
      const timed7d = T.timedActivity(truth, v).filter((a) => a.createdAt >= nowSec - 7 * DAY).length;
      expect(e.transactionCount7d, `${v.slug} transactionCount7d`).toBeGreaterThanOrEqual(timed7d);
    }
  });

  it('holders-history: the last simulated day ends with the final holder count per chain', async () => {
    const lastDay = T.utcDay(truth.to);
    const start = Date.parse(`${T.deploymentDay(truth)}T00:00:00Z`) / 1000;
    const { data } = await get(`/v1/vaults/holders-history?status=all&startDate=${start}`);
    for (const v of vaults) {
      const history: Json[] = vaultEntry(data, v).history;
      for (const chainId of truth.chainIds) {
        const n = T.chainHolderCount(truth, v, chainId);
        const last = history.find((h) => h.chainId === chainId && T.utcDay(h.day) === lastDay);
        expect(last, `${v.slug}@${chainId} ${lastDay}`).toBeDefined();
        expect({ end: last.end, count: last.count }, `${v.slug}@${chainId} ${lastDay}`).toEqual({
          end: n,
          count: 24,
        });
        // Nothing happened after the last simulated day: later days hold the final count throughout.
        for (const h of history.filter((x) => x.chainId === chainId && T.utcDay(x.day) > lastDay))
          expect(
            [h.start, h.end, h.min, h.max, h.average],
            `${v.slug}@${chainId} ${T.utcDay(h.day)}`,
          ).toEqual([n, n, n, n, n]);
      }
    }
  });

  it('holders-history: chain 101 has every day of the Solana side, each equal to its count at the day’s end', async () => {
    const sol = truth.solana;
    expect(sol, 'the truth has a Solana side').toBeDefined();
    const days = Object.entries(sol?.holdersByDay ?? {});
    expect(days.length, 'Solana days in the truth').toBeGreaterThan(1);
    const start = Date.parse(`${days[0][0]}T00:00:00Z`) / 1000;
    const { data } = await get(`/v1/vaults/holders-history?status=all&startDate=${start}`);
    const history: Json[] = vaultEntry(data, vaults[0]).history.filter((h: Json) => h.chainId === 101);
    const got = Object.fromEntries(history.map((h) => [T.utcDay(h.day), h.end]));
    for (const [day, holders] of days)
      expect(got[day], `chain 101 holders at the end of ${day}`).toBe(holders);
  });

  it('exits 0 on SIGTERM', async () => {
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    expect(svc.log.stderr).toMatch(/"msg":"stopped"/);
  }, 60_000);
});

describe('the 30-day windows over a longer backfill', () => {
  it('compositionApy and the hub vault navApy have their 30-day members, equal to the truth', async () => {
    const long = await startService(join(dir, 'long'), {
      backfillDays: String(BACKFILL_30D_DAYS),
      liveIntervalMs: '0',
    });
    await waitDrained(long);
    const t = T.readTruth(long.truthFile);
    await expectCompositionApy(long, t, true);
    const hub = T.truthVaults(t).filter(T.isHubVault);
    expect(hub).toHaveLength(1);
    const primary = t.chainIds[0];
    const start = Date.parse(`${T.deploymentDay(t)}T00:00:00Z`) / 1000;
    const { data } = await get(`/v1/vaults/apy-history?status=all&order=asc&startDate=${start}`, long);
    let known30d = 0;
    for (const h of vaultEntry(data, hub[0]).history as Json[]) {
      const day = T.utcDay(h.day);
      for (const [k, expected] of [
        ['rolling30d', T.navRolling(t, hub[0], primary, day, 30)],
        ['sec30d', T.navSec30d(t, hub[0], primary, day)],
      ] as const)
        if (expected === null) expect(h.navApy[k], `${hub[0].slug} ${day} navApy.${k}`).toBeNull();
        else {
          T.expectClose(h.navApy[k], expected, `${hub[0].slug} ${day} navApy.${k}`);
          known30d++;
        }
    }
    expect(known30d, 'hub navApy 30-day members known').toBeGreaterThan(0);
    long.child.kill('SIGTERM');
    expect(await long.exited).toBe(0);
  }, 400_000);
});

describe('a reorg on the live devnet', () => {
  it('serves the orphaned deposit while it is the head, then retracts it from the views', async () => {
    // The orphaned blocks stay the head until the test has seen them served, at any load.
    const release = join(dir, 'reorg-release');
    const live = await startService(join(dir, 'reorg'), {
      backfillDays: '1',
      liveIntervalMs: '1500',
      reorgAtTick: '2',
      reorgReleaseFile: release,
    });
    const primary = T.readTruth(live.truthFile).chainIds[0];
    const served = async () => {
      const { data } = await get(
        `/v1/vaults/recent-transactions?status=all&limit=100&chainId=${primary}`,
        live,
      );
      return (data as Json[]).flatMap((e) =>
        (e.recentTransactions as Json[]).map((r) => T.lc(r.transactionHash)),
      );
    };
    // The simulator names the transactions it is about to orphan, and holds them as the head.
    const orphaned = await vi.waitFor(
      () => {
        const m = /"txs":(\[[^\]]*\]),"msg":"devnet: blocks to be reorged out"/.exec(live.log.stderr);
        expect(m, `the reorg's blocks; ${stderrTail(live)}`).not.toBeNull();
        return (JSON.parse(m![1]) as string[]).map(T.lc);
      },
      { timeout: 90_000, interval: 300 },
    );
    await vi.waitFor(
      async () => {
        const now = new Set(await served());
        expect(
          orphaned.filter((h) => now.has(h)),
          `orphaned transactions served while they are the head; ${stderrTail(live)}`,
        ).not.toEqual([]);
      },
      { timeout: 90_000, interval: 300 },
    );
    writeFileSync(release, '');
    // The simulator books the orphaned transactions once it has replaced them.
    const reorg = await vi.waitFor(
      () => {
        const [first] = T.readTruth(live.truthFile).reorgs;
        expect(first, `the reorg in the truth; ${stderrTail(live)}`).toBeDefined();
        return first;
      },
      { timeout: 60_000, interval: 300 },
    );
    expect(reorg.orphanedTxs.map(T.lc)).toEqual(orphaned);
    await vi.waitFor(
      async () => {
        const p = (await get('/status', live)).ingest.evm.find((x: Json) => x.chainId === primary);
        expect(p?.reorgs, `the ingester to follow the reorg; ${stderrTail(live)}`).toBeGreaterThanOrEqual(1);
        expect(p.blocksRetracted, 'blocks retracted').toBeGreaterThanOrEqual(1);
      },
      { timeout: 60_000, interval: 300 },
    );
    await vi.waitFor(
      async () => {
        const now = new Set(await served());
        expect(
          orphaned.filter((h) => now.has(h)),
          'orphaned transactions still served',
        ).toEqual([]);
      },
      { timeout: 30_000, interval: 300 },
    );
    live.child.kill('SIGTERM');
    expect(await live.exited).toBe(0);
  }, 300_000);
});
