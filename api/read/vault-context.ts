/**
 * Loads the `VaultContext` of each requested vault (series over the days asked for, current
 * price and holders, settled horizon) and the data watermark of the answer: the oldest chain
 * watermark among the vaults' chains.
 */
import type { Store } from '../../store/client.ts';
import type { ChainBlocks } from '../http/provenance.ts';
import { loadWatermarks, provenanceOf } from './activity-watermark.ts';
import { currentState } from './prices.ts';
import type { RegistryVault } from './registry.ts';
import { emptySeries, loadVaultSeries, type SeriesDays } from './vault-data.ts';
import { chainsOf, settledThrough, type VaultContext } from './vault-days.ts';
import { DAY, dayStart } from './vault-numbers.ts';

export interface LoadedContexts {
  contexts: VaultContext[];
  /** Oldest watermark (Unix seconds) among the vaults' chains; null when one of them has none yet. */
  watermark: number | null;
  /** The newest block of each of those chains the answer holds every event of (activity-watermark.ts). */
  blocks: ChainBlocks;
}

/**
 * Which days to read: `'head'` is what the vault resources use (today, for tvl, liquid funds
 * and tvl30DayChange, and the latest settled day, for the navApy of `apy` / `sec30d`); else
 * a range or set of days (histories). `'head-live'`: the head and today's liquid-asset prices
 * (liveLiquidity=true).
 */
export type ContextDays = 'head' | 'head-live' | SeriesDays;

/** The contexts of `vaults` (in their order) at `nowMs` (the API clock). */
export async function loadContexts(
  store: Store,
  vaults: readonly RegistryVault[],
  nowMs: number,
  days: ContextDays = {},
): Promise<LoadedContexts> {
  const now = Math.floor(nowMs / 1000);
  const slugs = vaults.map((v) => v.slug);
  const watermarks = await loadWatermarks(store);
  // The vault's watermark: the oldest of its chains' (0 while one has none), as vault_settlement.
  const vaultMark = (v: RegistryVault) => {
    const chains = chainsOf(v);
    return chains.length ? Math.min(...chains.map((c) => watermarks.get(c)?.time ?? 0)) : 0;
  };
  const head = () => {
    const only = new Set([dayStart(now)]);
    for (const v of vaults) {
      const settled = Math.min(now, vaultMark(v));
      only.add(dayStart(settled) - DAY);
    }
    return { only: [...only].filter((d) => d >= 0), liquidPrices: days === 'head-live' };
  };
  const series = await loadVaultSeries(store, slugs, now, typeof days === 'string' ? head() : days);
  const current = await currentState(store, slugs);
  const contexts = vaults.map((vault) => {
    const s = series.get(vault.slug) ?? emptySeries();
    s.watermark = vaultMark(vault);
    const c = current.get(vault.slug);
    return {
      vault,
      series: s,
      current: c?.price,
      priceChain: c?.price?.chainId,
      holders: c?.holders ?? 0,
      settledThrough: settledThrough(s, now),
      now,
    };
  });
  const chains = [...new Set(vaults.flatMap(chainsOf))];
  const { watermark, blocks } = provenanceOf(watermarks, chains);
  // Null while one of the chains has no watermark yet, as vault_settlement's 1970-01-01.
  return { contexts, watermark: chains.every((c) => watermarks.has(c)) ? watermark : null, blocks };
}
