/**
 * Share decimals per (vault, chain): a vault's share token may have other decimals on
 * some chains (`decimalsOverride`) and on Solana (`solana.decimals`). Balances from
 * different chains are put on one exact scale (10^-36 tokens) before they are summed or
 * compared, so nothing is rounded before output.
 */
import { SOLANA_CHAIN_ID } from './activity-watermark.ts';
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

/**
 * SQL (and its query parameters) for the share decimals of `(vaultCol, chainCol)`:
 * the per-chain exceptions first, else the vault's decimals.
 */
export function decimalsSql(vaults: readonly RegistryVault[], vaultCol: string, chainCol: string) {
  const overrides: [string, number][] = [];
  for (const v of vaults) {
    const chains = new Set<number>([SOLANA_CHAIN_ID, ...v.chainIds]);
    for (const o of v.info.decimalsOverride ?? []) for (const k of Object.keys(o)) chains.add(Number(k));
    for (const c of chains) {
      const d = chainDecimals(v, c);
      if (d !== v.decimals) overrides.push([`${v.slug}|${c}`, d]);
    }
  }
  const key = `concat(${vaultCol}, '|', toString(${chainCol}))`;
  return {
    sql: `if(has({dec_keys:Array(String)}, ${key}),
      arrayElement({dec_vals:Array(UInt8)}, indexOf({dec_keys:Array(String)}, ${key})),
      arrayElement({vault_decs:Array(UInt8)}, indexOf({vault_slugs:Array(String)}, ${vaultCol})))`,
    params: {
      dec_keys: overrides.map((o) => o[0]),
      dec_vals: overrides.map((o) => o[1]),
      vault_slugs: vaults.map((v) => v.slug),
      vault_decs: vaults.map((v) => v.decimals),
    },
  };
}

/** SQL for `rawCol` (Int256 raw units with `decSql` decimals) on the common 10^-SCALE scale, exact. */
export function scaledSql(rawCol: string, decSql: string): string {
  return `toInt256(${rawCol}) * toInt256(concat('1', repeat('0', ${SCALE} - (${decSql}))))`;
}
