/**
 * Share decimals per (vault, chain): a vault's share token may have other decimals on
 * some chains (`decimalsOverride`) and on Solana (`solana.decimals`). Balances from
 * different chains are put on one exact scale (10^-36 tokens) before they are summed or
 * compared, so nothing is rounded before output (the `holder_values` and
 * `token_holder_values` views (views/plain) use the same scale).
 */
import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { RegistryVault } from './registry.ts';

/** Balances summed or ranked across chains are held as integers of 10^-SCALE tokens. */
export const SCALE = 36;

/** Decimals of the vault's share token on `chainId`. */
export function chainDecimals(v: RegistryVault, chainId: number): number {
  if (chainId === SOLANA_CHAIN_ID && v.info.solana?.decimals !== undefined) return v.info.solana.decimals;
  for (const o of v.info.decimalsOverride ?? []) {
    const d = o[String(chainId)];
    if (d !== undefined) return d;
  }
  return v.decimals;
}
