/**
 * Per-day state of one vault (docs/architecture.md, Units and formulas) looked up in its series, which the
 * views compute (api/read/vault-data.ts, views/plain): the close price, TVL, navApy
 * and which days are settled. Lookups over `VaultContext`; no metric arithmetic here.
 */

import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import { type ApyBlock, NULL_APY } from './history-types.ts';
import type { VaultPrice } from './prices.ts';
import type { RegistryVault } from './registry.ts';
import type { VaultDay, VaultSeries } from './vault-data.ts';
import { DAY } from './vault-numbers.ts';

/** One vault with everything its metrics are computed from. */
export interface VaultContext {
  vault: RegistryVault;
  series: VaultSeries;
  /** The current share price (api/read/prices.ts: the primary chain's rate when it has one). */
  current: VaultPrice | undefined;
  /** Chain whose closes are the vault's price history: the chain of `current` (the views' vault_price_current). */
  priceChain: number | undefined;
  /** Distinct addresses with a positive balance on any chain (numHolders). */
  holders: number;
  /** Every day ending at or before this (Unix seconds) is settled: min over the vault's chains of the watermark, capped at now. */
  settledThrough: number;
  /** The API clock, Unix seconds. */
  now: number;
}

/** The chains a vault lives on: its EVM chains, plus Solana (101) when it has a mint. */
export function chainsOf(v: RegistryVault): number[] {
  return v.solanaMint ? [...v.chainIds, SOLANA_CHAIN_ID] : v.chainIds;
}

/** The vault's oldest chain watermark (the `vault_settlement` view), capped at `now`. */
export function settledThrough(series: VaultSeries, now: number): number {
  return Math.min(now, series.watermark);
}

/** A UTC day is settled once every chain of the vault is ingested past its end. */
export function isSettled(ctx: VaultContext, day: number): boolean {
  return day + DAY <= ctx.settledThrough;
}

/** The close of `day` on `chainId` (carried forward) as e18 base-asset units per share, if the chain has one by then. */
export function closeE18(ctx: VaultContext, chainId: number | undefined, day: number): bigint | undefined {
  return chainId === undefined ? undefined : ctx.series.nav.get(chainId)?.get(day)?.priceE18;
}

/** The vault's numbers of `day` (`vault_tvl_daily`, `liquid_funds_daily`, composition views), if it has any. */
export function vaultDay(ctx: VaultContext, day: number): VaultDay | undefined {
  return ctx.series.days.get(day);
}

/** TVL at the end of `day` in e18 USD (`vault_tvl_daily`: every chain at its own close); 0 before any supply. */
export function tvlE18(ctx: VaultContext, day: number): bigint {
  return vaultDay(ctx, day)?.tvlE18 ?? 0n;
}

/** First day with a close on the price chain (the vault's history starts there). */
export function firstDay(ctx: VaultContext): number | undefined {
  return ctx.series.firstDay;
}

/** navApy of `day` on `chainId` (`nav_apy_daily`); every member null without a close that day. */
export function navApy(ctx: VaultContext, chainId: number | undefined, day: number): ApyBlock {
  return (chainId === undefined ? undefined : ctx.series.nav.get(chainId)?.get(day)?.navApy) ?? NULL_APY;
}

/** The latest settled day at or after the vault's first day, if any. */
export function latestSettledDay(ctx: VaultContext): number | undefined {
  return latestSettledDayOf(firstDay(ctx), ctx.settledThrough);
}

/** The latest day ending by `settledThrough` (Unix seconds) and at or after `first`, if any. */
export function latestSettledDayOf(first: number | undefined, settledThrough: number): number | undefined {
  const last = settledThrough - (settledThrough % DAY) - DAY;
  return first === undefined || last < first ? undefined : last;
}
