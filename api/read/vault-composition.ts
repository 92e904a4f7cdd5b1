/**
 * The details' liquid funds read live (`liveLiquidity=true`): the balances of the vault's
 * configured liquid assets read from the chains at request time, each valued at the USD price
 * the `liquid_funds_asset_daily` view gives that asset today (its latest ASSET_PRICE snapshot on
 * its chain or chain 0, else its configured `price`): the pricing is the view's, only the
 * balances differ. Without the flag, or when a chain cannot be read, the liquid funds are the
 * view's own (`metrics_vault_daily`, api/read/vault-data.ts). Also the output form of a yield
 * asset's day.
 */
import type { RegistryVault } from './registry.ts';
import { decimalE18, fromE18, mulRaw } from './vault-numbers.ts';

/** A liquid asset balance held by the vault, raw units. */
export interface LiquidBalance {
  chainId: number;
  /** Lower-case contract address. */
  contractAddress: string;
  amount: bigint;
}

/**
 * Reads the vault's liquid-asset balances from the chains at request time
 * (`liveLiquidity=true`, api/read/vault-live-liquidity.ts); a reader that throws makes the
 * answer fall back to the snapshots.
 */
export interface LiveLiquidityReader {
  balances(vault: RegistryVault): Promise<LiquidBalance[]>;
}

export type LiquiditySource = 'live' | 'snapshot';

/** `chainId|contract` (lower-case) -> the asset's USD price today (e18), from `liquid_funds_asset_daily`. */
export type LiquidPrices = Map<string, bigint>;
export const liquidKey = (chainId: number, contractAddress: string) =>
  `${chainId}|${contractAddress.toLowerCase()}`;

/**
 * USD value (e18) of live `balances` of the configured liquid assets at today's prices; an asset
 * the view has no row for (no balance snapshot yet) at its configured price, as the view would.
 */
export function liveLiquidFundsE18(
  v: RegistryVault,
  prices: LiquidPrices,
  balances: readonly LiquidBalance[],
): bigint {
  let total = 0n;
  for (const a of v.info.liquidAssets) {
    const key = liquidKey(a.chainId, a.contractAddress);
    const held = balances.find((b) => liquidKey(b.chainId, b.contractAddress) === key);
    if (!held) continue;
    total += mulRaw(prices.get(key) ?? decimalE18(a.price), held.amount, a.decimals);
  }
  return total;
}

/** One asset of a vault's composition on a UTC day: its price, APYs and weight. */
export interface DailyAsset {
  slug: string;
  priceE18: bigint;
  apy7dE18: bigint | null;
  apy30dE18: bigint | null;
  weightE18: bigint | null;
}

/** The output form of a yield asset's day (performance-history `assets`); a member the snapshot lacks is 0. */
export function assetOutput(a: DailyAsset) {
  const n = (v: bigint | null) => (v === null ? 0 : fromE18(v));
  return {
    price: fromE18(a.priceE18),
    apy7d: n(a.apy7dE18),
    apy30d: n(a.apy30dE18),
    compositionPct: n(a.weightE18),
  };
}
