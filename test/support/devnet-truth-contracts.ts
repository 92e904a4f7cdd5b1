/**
 * The ground truth as the deployed contracts answer it (the truth's `contractViews`, read with
 * their own view functions at every simulated day's last block and at the head,
 * devnet/sim/contract-views.ts): each controller's ERC-7540 state, the pending shares of a vault,
 * the accountants' rates and fees owed. The AtomicQueue's open requests come from the
 * simulator's book (their state has no view of its own but `getUserAtomicRequest`).
 */
import type { ContractViewsTruth, GroundTruthJson, VaultViewsTruth } from '../../devnet/sim/truth-json.ts';
import { lc, type TruthVault } from './devnet-truth-base.ts';

/** A controller's ERC-7540 state (raw units, decimal strings). */
export interface ControllerState {
  pending: string;
  claimableShares: string;
  claimableAssets: string;
}

export const NO_STATE: ControllerState = { pending: '0', claimableShares: '0', claimableAssets: '0' };

function vaultViews(views: ContractViewsTruth | undefined, v: TruthVault): VaultViewsTruth | undefined {
  return views?.vaults.find((x) => lc(x.share) === v.share);
}

/** The views at the head of `chainId`. */
export function headViews(
  truth: GroundTruthJson,
  chainId: number,
  v: TruthVault,
): VaultViewsTruth | undefined {
  return vaultViews(
    truth.contractViews.head.find((h) => h.chainId === chainId),
    v,
  );
}

/** The views at the last block of `day` on `chainId`. */
export function dayViews(
  truth: GroundTruthJson,
  chainId: number,
  day: string,
  v: TruthVault,
): VaultViewsTruth | undefined {
  return vaultViews(
    truth.contractViews.days.find((d) => d.chainId === chainId && d.day === day),
    v,
  );
}

/** Every (chain, day) whose last block the simulator read. */
export function viewDays(truth: GroundTruthJson): { chainId: number; day: string }[] {
  return truth.contractViews.days.map((d) => ({ chainId: d.chainId, day: d.day as string }));
}

/** Shares pending on the NestVaults of `v` at the heads: Σ pendingRedeemRequest over chains and controllers. */
export function erc7540PendingAtHead(truth: GroundTruthJson, v: TruthVault): bigint {
  let sum = 0n;
  for (const chainId of truth.chainIds)
    for (const c of Object.values(headViews(truth, chainId, v)?.controllers ?? {})) sum += BigInt(c.pending);
  return sum;
}

/** Shares of `v`'s AtomicQueue requests open at `now`: each user's latest request, not filled, deadline ahead. */
export function atomicOpenShares(truth: GroundTruthJson, v: TruthVault, now: number): bigint {
  const latest = new Map<string, GroundTruthJson['atomicRequests'][number]>();
  for (const r of truth.atomicRequests)
    if (lc(r.share) === v.share) latest.set(`${r.chainId}|${lc(r.queue)}|${lc(r.user)}|${lc(r.want)}`, r);
  let sum = 0n;
  for (const r of latest.values()) if (r.state === 'open' && r.deadline > now) sum += BigInt(r.amount);
  return sum;
}

/** Fees owed by `v`'s accountants at the end of `day`, summed over chains (raw base-asset units). */
export function feesOwedAt(truth: GroundTruthJson, v: TruthVault, day: string): bigint | undefined {
  let sum: bigint | undefined;
  for (const chainId of truth.chainIds) {
    const views = dayViews(truth, chainId, day, v);
    if (views) sum = (sum ?? 0n) + BigInt(views.feesOwed);
  }
  return sum;
}
