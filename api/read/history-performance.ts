/**
 * GET /vaults/{slug}/performance-history: one entry per UTC day of the vault's
 * history (api/read/history-days.ts), shaped from the views (vault_price_daily,
 * vault_tvl_daily, liquid_funds_daily, composition_daily, composition_apy_daily,
 * nav_apy_daily). Every day carries the close price on the
 * price chain, the TVL and the liquid funds at the day's end (today: now); `apy`
 * (compositionApy) and `navApy` only once the day is settled, null before.
 * `assets` lists the vault's targetComposition items; with
 * `includeCompositeAssets` each day also carries, per item with a COMPOSITION
 * snapshot by then, its price, apy7d, apy30d and compositionPct (its weight).
 */
import type { z } from 'zod';
import type { performanceHistory } from '../http/responses.ts';
import { type DayRange, historyDays } from './history-days.ts';
import { NULL_APY } from './history-types.ts';
import { assetOutput } from './vault-composition.ts';
import { closeE18, isSettled, navApy, type VaultContext, vaultDay } from './vault-days.ts';
import { fromE18 } from './vault-numbers.ts';

export type PerformanceHistory = z.infer<typeof performanceHistory>;

/** The performance history of the context's vault over `range`. */
export function performanceHistoryOf(
  ctx: VaultContext,
  range: DayRange & { includeCompositeAssets: boolean },
): PerformanceHistory {
  const v = ctx.vault;
  const history = historyDays(ctx, range).map((day) => {
    const settled = isSettled(ctx, day);
    const numbers = vaultDay(ctx, day);
    const assets = numbers?.assets ?? [];
    return {
      day,
      settled,
      vault: {
        price: fromE18(closeE18(ctx, ctx.priceChain, day) ?? 0n),
        tvl: fromE18(numbers?.tvlE18 ?? 0n),
        liquidFunds: fromE18(numbers?.liquidE18 ?? 0n),
        apy: settled ? (numbers?.compositionApy ?? NULL_APY) : null,
        navApy: settled ? navApy(ctx, ctx.priceChain, day) : null,
      },
      assets: range.includeCompositeAssets
        ? Object.fromEntries(assets.map((a) => [a.slug, assetOutput(a)]))
        : {},
    };
  });
  return {
    vaultAddress: v.vaultAddress,
    assets: v.info.targetComposition.map(({ slug, name }) => ({ slug, name })),
    history,
  };
}
