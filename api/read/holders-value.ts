/**
 * USD value of shares (DESIGN section 8): balance × current share price (accountant
 * rate, in the base asset) × the base asset's USD price, kept exact in 10^-18 USD.
 */

import type { Store } from '../../store/client.ts';
import { currentPrices } from './prices.ts';
import type { RegistryVault } from './registry.ts';

/** A decimal string (`"1"`, `"0.9998"`) as an integer of 10^-`scale`, truncated. */
export function decimalToScaled(s: string, scale: number): bigint {
  const neg = s.startsWith('-');
  const [int, frac = ''] = (neg ? s.slice(1) : s).split('.');
  const v = BigInt(int + frac.padEnd(scale, '0').slice(0, scale));
  return neg ? -v : v;
}

/** Per vault slug: the USD value of one whole share in 10^-18 USD (0 without a rate). */
export async function shareUsdE18(
  store: Store,
  vaults: readonly RegistryVault[],
): Promise<Map<string, bigint>> {
  const prices = await currentPrices(store);
  const out = new Map<string, bigint>();
  for (const v of vaults) {
    const p = prices.get(v.slug);
    const usd = decimalToScaled(v.baseAssetUsdPrice, 18);
    out.set(v.slug, p ? (p.rateRaw * usd) / 10n ** BigInt(p.rateDecimals) : 0n);
  }
  return out;
}
