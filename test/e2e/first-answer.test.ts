/**
 * Ready means every endpoint answers the data it is ready with: `vaultstream start` on the
 * default devnet (three chains, three vaults, 45 backfilled days; no live ticks, so the ground
 * truth is the chains' final state), and at the first 200 of `/readyz` every endpoint is asked
 * once, at once; each answer is then compared with the ground truth. Before, the first
 * GET /token-holders after ready could answer the snapshot built at start: `count 0`. (A mint
 * flow from before the service started is looked up when asked for: its first answer is its burn.)
 *
 * The ERC-7540 numbers are compared with the contracts' own views (the truth's
 * `contractViews`: pendingRedeemRequest, claimableRedeemRequest, maxWithdraw, getRate and
 * feesOwedInBase read at each simulated day's last block and at the head): the details'
 * pendingRedemptions at the head, each controller's state at every past day through the SQL
 * interface, the prices of every day and the fees accrued since the last claim.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PublicClient } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killServices, type Service, startService } from '../support/devnet-service.ts';
import * as T from '../support/devnet-truth.ts';
import * as C from '../support/devnet-truth-contracts.ts';

const DAY = 86_400;
type Json = any;
interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

const dir = mkdtempSync(join(tmpdir(), 'vs-e2e-first-'));
afterAll(() => {
  killServices();
  // A killed service's analysts process exits when it sees its parent gone: it may still write.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

let svc: Service;
let truth: T.GroundTruthJson;
let vaults: T.TruthVault[];
let nowSec = 0;
/** Every answer asked at the first 200 of /readyz, by request. */
const answers = new Map<string, Answer>();
const answer = (path: string) => answers.get(path) as Answer;
const data = (path: string) => {
  const a = answer(path);
  expect(a.status, `${path}: ${JSON.stringify(a.body).slice(0, 300)}`).toBe(200);
  return a.body.data;
};
const entryOf = (list: Json[], v: T.TruthVault) => {
  const e = list.find((x) => T.lc(x.vaultAddress) === v.share);
  expect(e, `vault ${v.slug}`).toBeDefined();
  return e;
};

async function ask(path: string, init?: RequestInit): Promise<void> {
  const res = await fetch(`${svc.api}${path}`, init);
  const text = await res.text();
  answers.set(init?.body ? `${path} ${init.body}` : path, {
    status: res.status,
    headers: res.headers,
    body: text ? JSON.parse(text) : undefined,
  });
}

beforeAll(async () => {
  // The default devnet, without the live ticks (their truth would move under the answers).
  svc = await startService(join(dir, 'data'), { liveIntervalMs: '0' });
  // /readyz just answered 200: every endpoint, once, at once.
  truth = T.readTruth(svc.truthFile);
  vaults = T.truthVaults(truth);
  nowSec = Math.floor(Date.now() / 1000);
  const start = Date.parse(`${T.deploymentDay(truth)}T00:00:00Z`) / 1000;
  const holder = truth.operators.find(
    (o) => o.chainId === truth.chainIds[0],
  ) as T.GroundTruthJson['operators'][number];
  const flow = T.mintFlows(truth)[0];
  // One after the other (the API takes at most 4 uncached requests of a client at once).
  for (const next of [
    () => ask('/v1/token-holders'),
    () => ask(`/v1/solana/mint-status/${flow.signature}`),
    () => ask('/v1/vaults?status=all'),
    () => ask('/v1/vaults/details?status=all'),
    () => ask(`/v1/vaults/apy-history?status=all&order=asc&startDate=${start}`),
    () => ask('/v1/vaults/recent-transactions?status=all&limit=100'),
    () => ask(`/v1/vaults/holders-history?status=all&startDate=${start}`),
    () => ask('/v1/vaults/holders?status=all'),
    () => ask(`/v1/vaults/fees?startDate=${T.deploymentDay(truth)}&endDate=${T.utcDay(nowSec)}`),
    ...vaults.flatMap((v) => [
      () => ask(`/v1/vaults/${v.slug}`),
      () => ask(`/v1/vaults/${v.slug}/details-lite`),
      () => ask(`/v1/vaults/${v.slug}/performance-history?startDate=${start}`),
      () => ask(`/v1/vaults/${v.slug}/failed-redemptions?startDate=${truth.from - DAY}`),
      () => ask(`/v1/vaults/${v.slug}/roles-assignments`),
      () => ask(`/v1/vaults/${v.slug}/holders-history?startDate=${start}`),
    ]),
    () =>
      ask('/v1/auto-claim/build-tx', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chainId: holder.chainId, user: holder.controller, enabled: holder.enabled }),
      }),
  ])
    await next();
}, 400_000);

describe('at the first 200 of /readyz, every endpoint answers the ground truth', () => {
  it('GET /token-holders: every holder with its balance and value, from a snapshot of the ready data', () => {
    const a = answer('/v1/token-holders');
    expect(a.headers.get('x-data-watermark'), 'the snapshot has a watermark').not.toBeNull();
    const { holders, count } = data('/v1/token-holders');
    const expected = T.tokenHolderBalances(truth);
    expect(count).toBe(expected.size);
    for (const h of holders as Json[]) {
      const raw = expected.get(`${T.lc(h.address)}|${T.lc(h.tokenAddress)}`);
      expect(raw, `token holder ${h.address} ${h.tokenAddress}`).toBeDefined();
      T.expectClose(h.balance, T.units(raw as bigint), `${h.address} balance`);
    }
  });

  it('GET /vaults, /vaults/{slug}, /vaults/details, details-lite: tvl, price, holders and pending redemptions', () => {
    const list = data('/v1/vaults?status=all');
    const details = data('/v1/vaults/details?status=all');
    for (const v of vaults) {
      const tvl = T.units(T.tvlRaw(truth, v), 2 * T.DECIMALS);
      for (const e of [entryOf(list, v), data(`/v1/vaults/${v.slug}`)]) {
        T.expectClose(e.tvl, tvl, `${v.slug} tvl`);
        expect(e.numHolders, `${v.slug} numHolders`).toBe(T.holderCount(truth, v));
      }
      const d = entryOf(details, v);
      const lite = data(`/v1/vaults/${v.slug}/details-lite`);
      for (const e of [d, lite]) {
        T.expectClose(e.tvl, tvl, `${v.slug} details tvl`);
        T.expectClose(e.tokenPrice, T.tokenPrice(truth, v), `${v.slug} tokenPrice`);
        expect(e.holders, `${v.slug} holders`).toBe(T.holderCount(truth, v));
      }
      T.expectClose(lite.liquidFunds, d.liquidFunds, `${v.slug} liquidFunds`);
      // ERC-7540: the NestVaults' own pendingRedeemRequest at the heads; plus the AtomicQueue's open requests.
      const pending = C.erc7540PendingAtHead(truth, v) + C.atomicOpenShares(truth, v, nowSec);
      T.expectClose(d.pendingRedemptions, T.units(pending), `${v.slug} pendingRedemptions`);
      const price = T.units(T.latestRate(truth, v, truth.chainIds[0]));
      T.expectClose(d.pendingRedemptionsValue, T.units(pending) * price, `${v.slug} pendingRedemptionsValue`);
      T.expectClose(
        d.shortfall,
        Math.max(0, d.pendingRedemptionsValue - d.liquidFunds),
        `${v.slug} shortfall`,
      );
    }
  });

  it('the devnet leaves ERC-7540 shares pending and claimable at the head', () => {
    let pending = 0n;
    let claimable = 0n;
    for (const chainId of truth.chainIds)
      for (const v of vaults)
        for (const c of Object.values(C.headViews(truth, chainId, v)?.controllers ?? {})) {
          pending += BigInt(c.pending);
          claimable += BigInt(c.claimableShares);
        }
    expect(pending).toBeGreaterThan(0n);
    expect(claimable).toBeGreaterThan(0n);
  });

  it('GET /vaults/holders and the holders histories: holders and their balances, the last day’s count', () => {
    const { data: top } = answer('/v1/vaults/holders?status=all').body;
    const start = Date.parse(`${T.deploymentDay(truth)}T00:00:00Z`) / 1000;
    const lastDay = T.utcDay(truth.to);
    const all = data(`/v1/vaults/holders-history?status=all&startDate=${start}`);
    for (const v of vaults) {
      const e = entryOf(top, v);
      expect(e.totalHolders, `${v.slug} totalHolders`).toBe(T.holderCount(truth, v));
      T.expectTopHolders(e.holders, T.chainBalances(truth, v), v.slug);
      const one = data(`/v1/vaults/${v.slug}/holders-history?startDate=${start}`);
      for (const history of [entryOf(all, v).history as Json[], one.history as Json[]])
        for (const chainId of truth.chainIds) {
          const last = history.find((h) => h.chainId === chainId && T.utcDay(h.day) === lastDay);
          expect(last?.end, `${v.slug}@${chainId} ${lastDay}`).toBe(T.chainHolderCount(truth, v, chainId));
        }
    }
  });

  it('apy-history and performance-history: every settled day, each day’s price the accountant’s getRate at its end', () => {
    const first = T.deploymentDay(truth);
    const yesterday = T.utcDay(nowSec - DAY);
    const start = Date.parse(`${first}T00:00:00Z`) / 1000;
    const apy = data(`/v1/vaults/apy-history?status=all&order=asc&startDate=${start}`);
    const primary = truth.chainIds[0];
    for (const v of vaults) {
      expect(
        (entryOf(apy, v).history as Json[]).map((h) => T.utcDay(h.day)),
        `${v.slug} settled days`,
      ).toEqual(T.daysFrom(first, yesterday));
      let compared = 0;
      for (const h of data(`/v1/vaults/${v.slug}/performance-history?startDate=${start}`).history as Json[]) {
        const views = C.dayViews(truth, primary, T.utcDay(h.day), v);
        if (!views) continue;
        T.expectClose(h.vault.price, T.units(BigInt(views.rate)), `${v.slug} ${T.utcDay(h.day)} price`);
        compared++;
      }
      expect(compared, `${v.slug}: days priced`).toBeGreaterThanOrEqual(44);
    }
  });

  it('GET /vaults/fees: charged per day, and what accrued since the last claim is the accountants’ feesOwedInBase', () => {
    const list = data(`/v1/vaults/fees?startDate=${T.deploymentDay(truth)}&endDate=${T.utcDay(nowSec)}`);
    for (const v of vaults) {
      const e = list.find((x: Json) => x.slug === v.slug);
      for (const [name, kind] of [
        ['depositFee', 'deposit'],
        ['instantRedemptionFee', 'instantRedemption'],
        ['redemptionFee', 'redemption'],
      ] as const) {
        const byDay = T.feesByDay(truth, v, kind);
        for (const p of e[name] as Json[])
          T.expectClose(p.value, T.units(byDay.get(p.date) ?? 0n), `${v.slug} ${name} ${p.date}`);
      }
      // The weekly claim ends its day: what is owed at a day's end accrued since the last claim.
      const claimed = T.feesByDay(truth, v, 'accountantClaimed');
      const since: number[] = [];
      let compared = 0;
      for (const [i, p] of (e.managementFee as Json[]).entries()) {
        since.push(p.value + (e.performanceFee as Json[])[i].value);
        if (claimed.has(p.date)) since.length = 0;
        const owed = C.feesOwedAt(truth, v, p.date);
        if (owed === undefined) continue;
        T.expectClose(
          since.reduce((a, b) => a + b, 0),
          T.units(owed),
          `${v.slug} fees owed at the end of ${p.date}`,
        );
        compared++;
      }
      expect(compared, `${v.slug}: days with fees owed`).toBeGreaterThanOrEqual(44);
    }
  });

  it('recent transactions, failed redemptions and role assignments', async () => {
    const recent = data('/v1/vaults/recent-transactions?status=all&limit=100');
    for (const v of vaults) {
      const rows: Json[] = entryOf(recent, v).recentTransactions;
      const cutoff = rows.length === 100 ? Math.min(...rows.map((r) => r.createdAt)) : -1;
      const got = rows
        .filter((r) => r.transactionType === 'REDEEM_REQUEST' && r.createdAt > cutoff)
        .map((r) => ({
          type: r.transactionType,
          chainId: r.chainId,
          user: T.lc(r.user),
          shares: r.shares,
          createdAt: r.createdAt,
        }));
      const want = T.timedActivity(truth, v).filter(
        (a) => a.type === 'REDEEM_REQUEST' && a.createdAt > cutoff,
      );
      T.expectSameRecords(got, want, ['shares'], `${v.slug} REDEEM_REQUEST`);
      const roles = data(`/v1/vaults/${v.slug}/roles-assignments`).roleAssignments as Json[];
      expect(
        roles
          .map((r) => ({ chainId: r.chainId, user: T.lc(r.user), role: r.role, enabled: r.enabled }))
          .sort(T.byKey),
        `${v.slug} roles`,
      ).toEqual(T.expectedRoles(truth, v));
      const failed = data(`/v1/vaults/${v.slug}/failed-redemptions?startDate=${truth.from - DAY}`)
        .failedRedemptions as Json[];
      const expected = T.failedRequests(truth, v, nowSec);
      expect(failed.length, `${v.slug} failed redemptions`).toBe(expected.length);
      for (const r of expected) {
        const held = await T.balanceAtTime(
          svc.rpc.get(r.chainId) as PublicClient,
          r.share,
          r.user,
          r.deadline,
        );
        const f = failed.find(
          (x) => T.lc(x.user) === T.lc(r.user) && x.expiresAt === r.deadline && x.chainId === r.chainId,
        );
        expect(f?.isValid, `${v.slug} ${r.user} ${r.deadline} isValid`).toBe(held >= BigInt(r.amount));
      }
    }
  });

  it('mint status (a flow from before the start, looked up on demand) and build-tx', () => {
    // The tracker discovers flows from its start on; an older one is looked up when asked for,
    // and its first answer is the burn (the later steps land as the tracker polls it).
    const flow = T.mintFlows(truth)[0];
    const status = data(`/v1/solana/mint-status/${flow.signature}`);
    expect(status.steps.solana.status, `${flow.signature} solana step`).toBe('completed');
    expect([status.solanaWallet, status.amount], `${flow.signature} burn`).toEqual([
      flow.wallet,
      flow.amount,
    ]);
    const holder = truth.operators.find(
      (o) => o.chainId === truth.chainIds[0],
    ) as T.GroundTruthJson['operators'][number];
    const key = [...answers.keys()].find((k) => k.startsWith('/v1/auto-claim/build-tx')) as string;
    // The user's registry state is already the one asked for: nothing to send.
    expect(data(key).transactions, `build-tx for ${holder.controller}`).toEqual([]);
  });

  it('each ERC-7540 controller at the head and at the end of every past day equals the NestVault’s views (SQL interface)', async () => {
    const sql = /vaultstream SQL (http:\/\/\S+) /.exec(svc.log.stdout)?.[1];
    expect(sql, 'the SQL interface').toBeDefined();
    const query = async (q: string) => {
      const res = await fetch(`${sql}/?query=${encodeURIComponent(`${q} FORMAT JSONEachRow`)}`);
      expect(res.status, q).toBe(200);
      return (await res.text())
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    };
    const rows: Json[] = await query(
      `SELECT vault, chain_id, controller, toString(day) AS day, toString(pending_shares) AS pending,
         toString(claimable_shares) AS claimable_shares, toString(claimable_assets) AS claimable_assets
       FROM vaultstream.erc7540_redemptions_daily`,
    );
    const today = T.utcDay(nowSec);
    const seen = new Set<string>();
    for (const r of rows) {
      const v = vaults.find((x) => x.slug === r.vault) as T.TruthVault;
      const views =
        r.day === today ? C.headViews(truth, r.chain_id, v) : C.dayViews(truth, r.chain_id, r.day, v);
      expect(views, `${r.vault}@${r.chain_id} ${r.day} read on chain`).toBeDefined();
      const controller = Object.keys(views?.controllers ?? {}).find((c) => T.lc(c) === r.controller);
      const want = controller ? views?.controllers[controller] : C.NO_STATE;
      expect(
        { pending: r.pending, claimableShares: r.claimable_shares, claimableAssets: r.claimable_assets },
        `${r.vault}@${r.chain_id} ${r.controller} ${r.day}`,
      ).toEqual(want);
      seen.add(`${r.vault}|${r.chain_id}|${r.controller}|${r.day}`);
    }
    // Every controller the contracts hold a state for, on every day, is in the view.
    let states = 0;
    for (const { chainId, day } of C.viewDays(truth))
      for (const v of vaults)
        for (const c of Object.keys(C.dayViews(truth, chainId, day, v)?.controllers ?? {})) {
          expect(seen.has(`${v.slug}|${chainId}|${T.lc(c)}|${day}`), `${v.slug}@${chainId} ${c} ${day}`).toBe(
            true,
          );
          states++;
        }
    expect(states, 'controller states read on chain').toBeGreaterThan(100);
  });
});
