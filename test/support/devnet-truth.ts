/**
 * Expectations derived from the devnet simulator's ground truth (`GroundTruthJson`,
 * devnet/sim/truth.ts) for the end-to-end test: the simulator books every amount
 * from its own arithmetic, so these numbers are independent of the ingester, the
 * views and the API. Everything stays exact (bigint) until `units` converts it the
 * way the API does at output.
 */
import { type Address, erc20Abi, type PublicClient } from 'viem';
import type { GroundTruthJson } from '../../devnet/sim/truth-json.ts';
import { byKey, lc, type TruthVault, truthVaults, units } from './devnet-truth-base.ts';

export type { GroundTruthJson } from '../../devnet/sim/truth-json.ts';
// The expectations are grouped by subject in the devnet-truth-* files; the tests import them all from here.
export {
  byKey,
  DECIMALS,
  daysFrom,
  deploymentDay,
  lc,
  readTruth,
  type TruthVault,
  truthVaults,
  units,
  utcDay,
} from './devnet-truth-base.ts';
export { expectClose, expectSameRecords, expectTopHolders } from './devnet-truth-expect.ts';
export {
  accrualPeriods,
  feesByDay,
  feesClaimedByDay,
  isClaimDay,
} from './devnet-truth-fees.ts';
export {
  closeRate,
  compositionApyOf,
  isHubVault,
  latestRate,
  navRolling,
  navSec30d,
  tokenPrice,
  tvlRaw,
  yieldClose,
} from './devnet-truth-rates.ts';

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
 * Failed redemptions (docs/architecture.md, Endpoint semantics): atomic requests never filled whose deadline
 * passed before `now` (the truth marks them `expired` only when it next looks). The queue keeps one
 * request per (user, offer, want): a later request replaces an expired one, which then is no more.
 */
export function failedRequests(truth: GroundTruthJson, v: TruthVault, now: number) {
  const latest = new Map<string, GroundTruthJson['atomicRequests'][number]>();
  for (const r of truth.atomicRequests)
    if (lc(r.share) === v.share) latest.set(`${r.chainId}|${lc(r.queue)}|${lc(r.user)}|${lc(r.want)}`, r);
  return [...latest.values()].filter(
    (r) => r.state === 'expired' || (r.state === 'open' && r.deadline < now),
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
  for (const e of truth.nestEvents)
    if (lc(e.nestVault) === nestVault && e.kind === 'request')
      out.push({
        type: 'REDEEM_REQUEST',
        chainId: e.chainId,
        user: lc(e.by),
        shares: units(BigInt(e.shares)),
        createdAt: e.at,
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
