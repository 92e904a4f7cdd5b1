/**
 * Loads the `VaultContext` of each requested vault (series, price chain, settled
 * horizon) and the data watermark of the answer: the oldest chain watermark among
 * the vaults' chains.
 */
import type { Store } from '../../store/client.ts';
import { currentPrices } from './prices.ts';
import type { RegistryVault } from './registry.ts';
import { emptySeries, loadVaultSeries, loadWatermarks } from './vault-data.ts';
import { chainsOf, settledThrough, type VaultContext } from './vault-days.ts';

export interface LoadedContexts {
  contexts: VaultContext[];
  /** Oldest watermark (Unix seconds) among the vaults' chains; null when one of them has none yet. */
  watermark: number | null;
}

/** The contexts of `vaults` (in their order) at `nowMs` (the API clock). */
export async function loadContexts(
  store: Store,
  vaults: readonly RegistryVault[],
  nowMs: number,
): Promise<LoadedContexts> {
  const now = Math.floor(nowMs / 1000);
  const slugs = vaults.map((v) => v.slug);
  const series = await loadVaultSeries(store, slugs, now);
  const watermarks = await loadWatermarks(store);
  const prices = await currentPrices(store);
  const contexts = vaults.map((vault) => {
    const s = series.get(vault.slug) ?? emptySeries();
    return {
      vault,
      series: s,
      current: prices.get(vault.slug),
      priceChain: prices.get(vault.slug)?.chainId,
      settledThrough: settledThrough(s, now),
      now,
    };
  });
  const chains = [...new Set(vaults.flatMap(chainsOf))];
  const marks = chains.map((c) => watermarks.get(c));
  const watermark =
    marks.length && marks.every((m) => m !== undefined) ? Math.min(...(marks as number[])) : null;
  return { contexts, watermark };
}
