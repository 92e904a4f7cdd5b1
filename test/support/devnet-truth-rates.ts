/**
 * Prices and yields from the ground truth (docs/architecture.md, Units and formulas): the
 * accountant's close rates carried forward, navApy, TVL, the share price, compositionApy and
 * the yield assets' close prices.
 */
import { defaultVaultSpec } from '../../devnet/deploy.ts';
import type { GroundTruthJson } from '../../devnet/sim/truth-json.ts';
import { addDays, deploymentDay, type TruthVault, units } from './devnet-truth-base.ts';

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
