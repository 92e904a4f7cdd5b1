/**
 * Expectations derived from the devnet simulator's ground truth (`GroundTruthJson`,
 * devnet/sim/truth.ts) for the end-to-end test: the simulator books every amount
 * from its own arithmetic, so these numbers are independent of the ingester, the
 * views and the API. Everything stays exact (bigint) until `units` converts it the
 * way the API does at output.
 */
import { readFileSync } from 'node:fs';
import { type Address, erc20Abi, type PublicClient } from 'viem';
import { expect } from 'vitest';
import { defaultVaultSpec } from '../../devnet/deploy.ts';
import { type FeeKind, type GroundTruthJson, utcDay } from '../../devnet/sim/truth.ts';

export type { GroundTruthJson } from '../../devnet/sim/truth.ts';

/** Shares, rates and the USDC stand-in all have 6 decimals on the devnet (devnet/README.md). */
export const DECIMALS = 6;
const DAY = 86_400;

/**
 * Nest's role numbering (contracts-and-flows section 7, `nest:script/Constants.sol`),
 * the default role map of docs/architecture.md, Endpoint semantics, transcribed from the reference. Deliberately
 * not imported from api/read/activity-roles.ts: the ground truth must not share a table
 * with the code it checks.
 */
export const NEST_ROLE_NAMES: Readonly<Record<number, string>> = {
  0: 'OWNER',
  1: 'STRATEGIST',
  2: 'MANAGER',
  3: 'TELLER',
  4: 'UPDATE_EXCHANGE_RATE',
  5: 'SOLVER',
  6: 'PAUSER',
  7: 'PREDICATE_PROXY',
  10: 'QUEUE',
  11: 'CAN_SOLVE',
  12: 'COMPOSER',
  13: 'RELAYER',
  14: 'KEEPER',
};

export function readTruth(file: string): GroundTruthJson {
  return JSON.parse(readFileSync(file, 'utf8')) as GroundTruthJson;
}

/** A raw integer amount as a JSON number of whole tokens, as the API converts at output. */
export function units(raw: bigint, decimals = DECIMALS): number {
  const neg = raw < 0n;
  const abs = neg ? -raw : raw;
  const base = 10n ** BigInt(decimals);
  const frac = (abs % base).toString().padStart(decimals, '0');
  const n = Number(`${abs / base}.${frac}`);
  return neg ? -n : n;
}

/**
 * Equal up to float conversion at output (relative 1e-9), never a looser tolerance.
 * Soft: the test goes on and reports every mismatch, which is what locates a bug.
 */
export function expectClose(actual: unknown, expected: number, what: string): void {
  const ok = typeof actual === 'number' && Math.abs(actual - expected) <= Math.abs(expected) * 1e-9;
  expect.soft(ok, `${what}: got ${actual}, expected ${expected}`).toBe(true);
}

export const lc = (s: string) => s.toLowerCase();

export interface TruthVault {
  index: number;
  /** Registry slug: the symbol in lower case (devnet/run.ts). */
  slug: string;
  /** Share address, lower case (the API's form). */
  share: string;
  /** The share address as the truth spells it (its keys). */
  shareKey: string;
  startingRate: bigint;
}

export function truthVaults(truth: GroundTruthJson): TruthVault[] {
  return truth.addresses.vaults.map((v, index) => {
    const spec = defaultVaultSpec(index);
    return {
      index,
      slug: spec.symbol.toLowerCase(),
      share: lc(v.share),
      shareKey: v.share,
      startingRate: spec.startingRate,
    };
  });
}

/** (chain, holder) -> balance of one share, zero balances omitted. */
export function chainBalances(
  truth: GroundTruthJson,
  v: TruthVault,
): { chainId: number; user: string; raw: bigint }[] {
  const out: { chainId: number; user: string; raw: bigint }[] = [];
  for (const chainId of truth.chainIds)
    for (const [user, amount] of Object.entries(truth.balances[chainId]?.[v.shareKey] ?? {}))
      if (BigInt(amount) > 0n) out.push({ chainId, user: lc(user), raw: BigInt(amount) });
  // Vault 0's share also lives on Solana (chain 101), its holders keyed by their base58 wallet.
  if (v.index === 0 && truth.solana)
    for (const [user, amount] of Object.entries(truth.solana.balances))
      if (BigInt(amount) > 0n) out.push({ chainId: 101, user: lc(user), raw: BigInt(amount) });
  return out;
}

/** The mint flows of the truth and the step statuses each ends with. */
export function mintFlows(truth: GroundTruthJson) {
  return truth.solana?.mintFlows ?? [];
}

/** `holder|share` (lower case) -> balance summed over every EVM chain; Solana holders under `holder|mint`. */
export function tokenHolderBalances(truth: GroundTruthJson): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const v of truthVaults(truth))
    for (const b of chainBalances(truth, v)) {
      // The Solana mint's holders are rows of their own, under the mint's address.
      const token = b.chainId === 101 ? lc(truth.solana?.mint ?? '') : v.share;
      const key = `${b.user}|${token}`;
      out.set(key, (out.get(key) ?? 0n) + b.raw);
    }
  return out;
}

/** Distinct addresses with a positive balance on at least one chain. */
export function holderCount(truth: GroundTruthJson, v: TruthVault): number {
  return new Set(chainBalances(truth, v).map((b) => b.user)).size;
}

/** Holders of one share on one chain. */
export function chainHolderCount(truth: GroundTruthJson, v: TruthVault, chainId: number): number {
  return chainBalances(truth, v).filter((b) => b.chainId === chainId).length;
}

/**
 * The deployment day: the simulator's first transactions (the vault setup) follow the
 * deployment on the genesis day, before any rate update, so from then on the
 * accountant holds the spec's starting rate.
 */
export const deploymentDay = (truth: GroundTruthJson) => utcDay(truth.from);

const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY * 1000).toISOString().slice(0, 10);

/**
 * Close price P(d) of docs/architecture.md, Units and formulas: the last rate set at or before the end of UTC
 * day `day` on `chainId` (the truth lists only days with an update: carried forward,
 * the starting rate from the deployment day on); undefined before the deployment.
 */
export function closeRate(
  truth: GroundTruthJson,
  v: TruthVault,
  chainId: number,
  day: string,
): bigint | undefined {
  if (day < deploymentDay(truth)) return undefined;
  const updates = truth.closePrices[chainId]?.[v.shareKey] ?? {};
  let best: string | undefined;
  for (const d of Object.keys(updates)) if (d <= day && (!best || d > best)) best = d;
  return best ? BigInt(updates[best]) : v.startingRate;
}

/** The latest rate on `chainId` (the truth's last close, else the starting rate). */
export function latestRate(truth: GroundTruthJson, v: TruthVault, chainId: number): bigint {
  return closeRate(truth, v, chainId, '9999-12-31') as bigint;
}

/** navApy rolling over `window` days (docs/architecture.md, Units and formulas): (P(d)/P(d-w) - 1) * 365/w * 100, null without history. */
export function navRolling(
  truth: GroundTruthJson,
  v: TruthVault,
  chainId: number,
  day: string,
  window: number,
): number | null {
  const now = closeRate(truth, v, chainId, day);
  const then = closeRate(truth, v, chainId, addDays(day, -window));
  if (now === undefined || then === undefined) return null;
  return (Number(now) / Number(then) - 1) * (365 / window) * 100;
}

/** navApy sec30d (docs/architecture.md, Units and formulas): 2 * ((P(d)/P(d-30))^6 - 1) * 100, null without history. */
export function navSec30d(
  truth: GroundTruthJson,
  v: TruthVault,
  chainId: number,
  day: string,
): number | null {
  const now = closeRate(truth, v, chainId, day);
  const then = closeRate(truth, v, chainId, addDays(day, -30));
  if (now === undefined || then === undefined) return null;
  return 2 * ((Number(now) / Number(then)) ** 6 - 1) * 100;
}

/** TVL in raw 12-decimal base-asset units: sum over chains of totalSupply * that chain's latest rate. */
export function tvlRaw(truth: GroundTruthJson, v: TruthVault): bigint {
  let sum = 0n;
  for (const chainId of truth.chainIds) {
    const supply = BigInt(truth.supply[chainId]?.[v.shareKey] ?? '0');
    sum += supply * latestRate(truth, v, chainId);
  }
  // Solana has no accountant: its supply is priced at the vault's price chain (the primary chain).
  if (v.index === 0 && truth.solana)
    sum += BigInt(truth.solana.supply) * latestRate(truth, v, truth.chainIds[0]);
  return sum;
}

/** Share price in the base asset from the primary chain's latest rate, as a number. */
export const tokenPrice = (truth: GroundTruthJson, v: TruthVault) =>
  units(latestRate(truth, v, truth.chainIds[0]));

/** day -> fees of `kind` summed over chains (raw asset units). */
export function feesByDay(truth: GroundTruthJson, v: TruthVault, kind: FeeKind): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const f of truth.fees)
    if (lc(f.share) === v.share && f.kind === kind) out.set(f.day, (out.get(f.day) ?? 0n) + BigInt(f.amount));
  return out;
}

/** NestVault fee kinds: the fees the NestVault keeps until the weekly `claimFees`. */
const NEST_FEE_KINDS: FeeKind[] = ['deposit', 'instantRedemption', 'redemption'];

/**
 * Whether the simulator claims fees at the end of `day` (devnet/simulator.ts
 * `simulateDay`: weekly, on UTC day numbers = 6 mod 7), within the simulated span.
 */
export function isClaimDay(truth: GroundTruthJson, day: string): boolean {
  const n = Date.parse(`${day}T00:00:00Z`) / 1000 / DAY;
  return n % 7 === 6 && day > deploymentDay(truth) && day <= utcDay(truth.to);
}

/**
 * day -> fees claimed (raw asset units, summed over chains). The weekly claim comes
 * last in the simulated day and takes the accountant's fees owed (booked from its
 * FeesClaimed log) and everything the NestVault charged since the previous claim,
 * that day included.
 */
export function feesClaimedByDay(truth: GroundTruthJson, v: TruthVault): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const nest = new Map<string, bigint>();
  for (const kind of NEST_FEE_KINDS)
    for (const [day, amount] of feesByDay(truth, v, kind)) nest.set(day, (nest.get(day) ?? 0n) + amount);
  const accountant = feesByDay(truth, v, 'accountantClaimed');
  let pending = 0n;
  for (let day = deploymentDay(truth); day <= utcDay(truth.to); day = addDays(day, 1)) {
    pending += nest.get(day) ?? 0n;
    if (!isClaimDay(truth, day)) continue;
    out.set(day, pending + (accountant.get(day) ?? 0n));
    pending = 0n;
  }
  return out;
}

/**
 * Closed accrual periods: for each claim day, the days since the previous claim (that
 * day included) and the accountant fees claimed at its end, which are exactly what
 * accrued over those days (rates update at the start of a day, the claim ends it).
 */
export function accrualPeriods(truth: GroundTruthJson, v: TruthVault): { days: string[]; claimed: bigint }[] {
  const accountant = feesByDay(truth, v, 'accountantClaimed');
  const out: { days: string[]; claimed: bigint }[] = [];
  let days: string[] = [];
  for (let day = deploymentDay(truth); day <= utcDay(truth.to); day = addDays(day, 1)) {
    days.push(day);
    if (!isClaimDay(truth, day)) continue;
    out.push({ days, claimed: accountant.get(day) ?? 0n });
    days = [];
  }
  return out;
}

/**
 * Failed redemptions (docs/architecture.md, Endpoint semantics): atomic requests never filled whose deadline
 * passed before `now` (the truth marks them `expired` only when it next looks).
 */
export function failedRequests(truth: GroundTruthJson, v: TruthVault, now: number) {
  return truth.atomicRequests.filter(
    (r) => lc(r.share) === v.share && (r.state === 'expired' || (r.state === 'open' && r.deadline < now)),
  );
}

/** Nest's KEEPER role id: the deployment grants it to the RedeemOperator on every authority (devnet/deploy.ts). */
const KEEPER_ROLE = 14;

/**
 * Latest role states of the vault's authority as the API names them, sorted: the
 * simulator's book plus the deployment's KEEPER grant to the RedeemOperator, which
 * precedes the simulator and so is not in the truth file (the simulator only picks
 * holders, so no later entry overrides it).
 */
export function expectedRoles(truth: GroundTruthJson, v: TruthVault) {
  const { redeemOperator } = truth.addresses;
  const deployed = truth.chainIds.map((chainId) => ({
    chainId,
    share: v.shareKey,
    user: redeemOperator,
    role: KEEPER_ROLE,
    enabled: true,
  }));
  const booked = truth.roles.filter((r) => lc(r.share) === v.share);
  const overridden = (d: { chainId: number; user: string; role: number }) =>
    booked.some((r) => r.chainId === d.chainId && lc(r.user) === lc(d.user) && r.role === d.role);
  return [...deployed.filter((d) => !overridden(d)), ...booked]
    .map((r) => ({
      chainId: r.chainId,
      user: lc(r.user),
      role: NEST_ROLE_NAMES[r.role] ?? `ROLE_${r.role}`,
      enabled: r.enabled,
    }))
    .sort(byKey);
}

/** A stable order over plain records: by their JSON text. */
export function byKey(a: object, b: object): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface TimedActivity {
  type: 'REDEEM_REQUEST' | 'BRIDGE_IN' | 'BRIDGE_OUT';
  chainId: number;
  user: string;
  shares: number;
  createdAt: number;
}

/**
 * The vault's activities the truth times: queue and ERC-7540 redemption requests and
 * share OFT moves between the devnet chains (deposits, withdrawals and transfers are
 * only counted, not timed, by the simulator).
 */
export function timedActivity(truth: GroundTruthJson, v: TruthVault): TimedActivity[] {
  const out: TimedActivity[] = [];
  for (const r of truth.atomicRequests)
    if (lc(r.share) === v.share)
      out.push({
        type: 'REDEEM_REQUEST',
        chainId: r.chainId,
        user: lc(r.user),
        shares: units(BigInt(r.amount)),
        createdAt: r.requestedAt,
      });
  const nestVault = lc(truth.addresses.vaults[v.index].nestVault);
  for (const r of truth.nestRedemptions)
    if (lc(r.nestVault) === nestVault)
      out.push({
        type: 'REDEEM_REQUEST',
        chainId: r.chainId,
        user: lc(r.controller),
        shares: units(BigInt(r.shares)),
        createdAt: r.requestedAt,
      });
  if (v.index === 0)
    for (const b of truth.bridges) {
      const shares = units(BigInt(b.amount));
      out.push({ type: 'BRIDGE_OUT', chainId: b.srcChainId, user: lc(b.user), shares, createdAt: b.sentAt });
      if (b.receivedAt !== undefined)
        out.push({
          type: 'BRIDGE_IN',
          chainId: b.dstChainId,
          user: lc(b.user),
          shares,
          createdAt: b.receivedAt,
        });
    }
  return out.sort(byKey);
}

export { utcDay };

/** Every UTC day from `from` to `to`, both included. */
export function daysFrom(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) out.push(d);
  return out;
}

/**
 * Same records in any order; the named number fields compared with the output
 * tolerance, the rest exactly. Soft, as `expectClose`.
 */
export function expectSameRecords<T extends object>(
  got: T[],
  want: T[],
  numbers: (keyof T)[],
  what: string,
): void {
  const strip = (r: T) =>
    Object.fromEntries(Object.entries(r).filter(([k]) => !numbers.includes(k as keyof T)));
  const order = (a: T, b: T) => byKey(strip(a), strip(b));
  const [g, w] = [[...got].sort(order), [...want].sort(order)];
  expect.soft(g.map(strip), what).toEqual(w.map(strip));
  if (g.length !== w.length) return;
  g.forEach((r, i) => {
    for (const k of numbers) expectClose(r[k], w[i][k] as number, `${what} #${i} ${String(k)}`);
  });
}

/** The top-100 rows are the largest (chain, user) balances, each equal to its truth balance. */
export function expectTopHolders(
  rows: { chainId: number; user: string; balance: number }[],
  balances: { chainId: number; user: string; raw: bigint }[],
  what: string,
): void {
  const truthOf = new Map(balances.map((b) => [`${b.chainId}|${b.user}`, b.raw]));
  expect(rows, `${what} rows`).toHaveLength(Math.min(100, balances.length));
  const listed = new Set<string>();
  for (const r of rows) {
    const key = `${r.chainId}|${lc(r.user)}`;
    const raw = truthOf.get(key);
    expect(raw, `${what}: unexpected holder ${key}`).toBeDefined();
    expectClose(r.balance, units(raw as bigint), `${what} ${key}`);
    listed.add(key);
  }
  const smallest = rows.length ? Math.min(...rows.map((r) => r.balance)) : 0;
  for (const [key, raw] of truthOf)
    if (!listed.has(key)) expect(units(raw), `${what}: ${key} left out`).toBeLessThanOrEqual(smallest);
}

/** `holder`'s balance of `token` in the state of the last block at or before `at` (binary search by time). */
export async function balanceAtTime(
  client: PublicClient,
  token: string,
  holder: string,
  at: number,
): Promise<bigint> {
  let lo = 0n;
  let hi = await client.getBlockNumber();
  while (lo < hi) {
    const mid = (lo + hi + 1n) / 2n;
    if ((await client.getBlock({ blockNumber: mid })).timestamp <= BigInt(at)) lo = mid;
    else hi = mid - 1n;
  }
  return client.readContract({
    address: token as Address,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [holder as Address],
    blockNumber: lo,
  });
}

/** compositionApy of `v` on `day` as the truth computes it (devnet/sim/truth.ts), undefined outside its days. */
export function compositionApyOf(truth: GroundTruthJson, v: TruthVault, day: string) {
  return truth.compositionApy?.[v.shareKey]?.[day];
}

/** A yield asset's close price (USD) on the primary chain at or before `day`, undefined before its first. */
export function yieldClose(truth: GroundTruthJson, slug: string, day: string): number | undefined {
  const series = truth.yieldPrices?.[truth.chainIds[0]]?.[slug] ?? {};
  let best: string | undefined;
  for (const d of Object.keys(series)) if (d <= day && (!best || d > best)) best = d;
  return best ? units(BigInt(series[best])) : undefined;
}

/** Whether vault `v` has a Nest hub accountant (devnet/deploy.ts `defaultVaultSpec`). */
export const isHubVault = (v: TruthVault) => defaultVaultSpec(v.index).accountant === 'hub';
