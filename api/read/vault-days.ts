/**
 * Per-day state of one vault from its series (DESIGN section 8): the close price
 * carried forward, the supply per chain, TVL, navApy and which days are settled.
 * Pure functions over `VaultContext`, exact until a number is produced for output.
 */
import type { ApyBlock } from './history-types.ts';
import type { VaultPrice } from './prices.ts';
import type { RegistryVault } from './registry.ts';
import type { DailyClose, VaultSeries } from './vault-data.ts';
import { DAY, decimalE18, mulRaw, ratio, rawToE18 } from './vault-numbers.ts';

export const SOLANA_CHAIN_ID = 101;

/** One vault with everything its metrics are computed from. */
export interface VaultContext {
  vault: RegistryVault;
  series: VaultSeries;
  /** The current share price (api/read/prices.ts: the primary chain's rate when it has one). */
  current: VaultPrice | undefined;
  /** Chain whose closes are the vault's price history: the chain of `current`. */
  priceChain: number | undefined;
  /** Every day ending at or before this (Unix seconds) is settled: min over the vault's chains of the watermark, capped at now. */
  settledThrough: number;
  /** The API clock, Unix seconds. */
  now: number;
}

/** The chains a vault lives on: its EVM chains, plus Solana (101) when it has a mint. */
export function chainsOf(v: RegistryVault): number[] {
  return v.solanaMint ? [...v.chainIds, SOLANA_CHAIN_ID] : v.chainIds;
}

/** Oldest watermark among `chains` (0 when one has none), capped at `now`. */
export function settledThrough(
  chains: readonly number[],
  watermarks: Map<number, number>,
  now: number,
): number {
  return Math.min(now, ...chains.map((c) => watermarks.get(c) ?? 0));
}

/** A UTC day is settled once every chain of the vault is ingested past its end. */
export function isSettled(ctx: VaultContext, day: number): boolean {
  return day + DAY <= ctx.settledThrough;
}

/** The last item whose `day` is at or before `day` (items ascending), if any. */
export function asOf<T extends { day: number }>(items: readonly T[] | undefined, day: number): T | undefined {
  if (!items) return undefined;
  let lo = 0;
  let hi = items.length - 1;
  let found: T | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (items[mid].day <= day) {
      found = items[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Share decimals on `chainId`: `decimalsOverride`, the Solana mint's decimals, else the vault's. */
export function shareDecimals(v: RegistryVault, chainId: number): number {
  for (const o of v.info.decimalsOverride ?? [])
    if (o[String(chainId)] !== undefined) return o[String(chainId)];
  if (chainId === SOLANA_CHAIN_ID && v.info.solana) return v.info.solana.decimals;
  return v.decimals;
}

/** The close of `day` on `chainId` (carried forward), as e18 base-asset units per share. */
export function closeE18(ctx: VaultContext, chainId: number | undefined, day: number): bigint | undefined {
  const c: DailyClose | undefined =
    chainId === undefined ? undefined : asOf(ctx.series.closes.get(chainId), day);
  return c && rawToE18(c.rate, c.rateDecimals);
}

/** Shares on `chainId` at the end of `day`, raw units. */
export function supplyAt(ctx: VaultContext, chainId: number, day: number): bigint {
  let total = 0n;
  for (const c of ctx.series.supplyChanges.get(chainId) ?? []) if (c.day <= day) total += c.delta;
  return total;
}

/**
 * TVL at the end of `day` in e18 USD: over every chain with supply, supply times
 * that chain's close (the vault price where the chain has no accountant, e.g.
 * Solana) times the base asset's USD price.
 */
export function tvlE18(ctx: VaultContext, day: number): bigint {
  const usd = decimalE18(ctx.vault.baseAssetUsdPrice);
  let total = 0n;
  for (const chainId of ctx.series.supplyChanges.keys()) {
    const price = closeE18(ctx, chainId, day) ?? closeE18(ctx, ctx.priceChain, day);
    if (price === undefined) continue;
    const supply = supplyAt(ctx, chainId, day);
    total += mulRaw((price * usd) / 10n ** 18n, supply, shareDecimals(ctx.vault, chainId));
  }
  return total;
}

/** First day with a close on the price chain (the vault's history starts there). */
export function firstDay(ctx: VaultContext): number | undefined {
  return ctx.priceChain === undefined ? undefined : ctx.series.closes.get(ctx.priceChain)?.[0]?.day;
}

/**
 * navApy of `day` from the closes of `chainId` (DESIGN section 8): P(d)/P(d-n)
 * annualised for n = 7 and 30, and the SEC-style 30-day yield; a member whose
 * earlier close is missing is null.
 */
export function navApy(ctx: VaultContext, chainId: number | undefined, day: number): ApyBlock {
  const p = closeE18(ctx, chainId, day);
  const growth = (n: number) => {
    const before = closeE18(ctx, chainId, day - n * DAY);
    return p === undefined || before === undefined ? null : ratio(p, before);
  };
  const g7 = growth(7);
  const g30 = growth(30);
  return {
    rolling7d: g7 === null ? null : (g7 - 1) * (365 / 7) * 100,
    rolling30d: g30 === null ? null : (g30 - 1) * (365 / 30) * 100,
    sec30d: g30 === null ? null : 2 * (g30 ** 6 - 1) * 100,
  };
}

/** The latest settled day at or after the vault's first day, if any. */
export function latestSettledDay(ctx: VaultContext): number | undefined {
  const first = firstDay(ctx);
  const last = ctx.settledThrough - (ctx.settledThrough % DAY) - DAY;
  return first === undefined || last < first ? undefined : last;
}
