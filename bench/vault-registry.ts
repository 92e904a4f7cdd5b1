/**
 * The synthetic benchmark vaults as the registry holds them (bench/synthetic-history.ts and
 * bench/api.ts register them): vault `i` is `bench-0i`, its vault and accountant addresses are
 * derived from `i`, its accountant is the hub on the primary chain and a spoke elsewhere, and
 * its one liquid asset is a 6-decimal USDC on the primary chain.
 */
import { vaultSchema } from '../core/settings/registry.ts';

/** The address `base + i`, 20 bytes. */
export const benchAddress = (i: number, base: number) => `0x${(base + i).toString(16).padStart(40, '0')}`;
export const benchSlug = (i: number) => `bench-${String(i).padStart(2, '0')}`;
/** SQL: the slug of the vault whose index is the SQL expression `v`. */
export const benchSlugSql = (v: string) => `concat('bench-', leftPad(toString(${v}), 2, '0'))`;
/** SQL: the vault address of the vault whose index is the SQL expression `v`. */
export const benchVaultSql = (v: string) => `concat('0x', leftPad(lower(hex(${0x7a0000} + ${v})), 40, '0'))`;

/** The `registry_raw` row of vault `i`; `vault` adds to (or overrides) its registry entry. */
export function benchRegistryRow(
  i: number,
  opts: { chainIds: number[]; usdc: string; mint?: string; vault?: Record<string, unknown> },
): Record<string, unknown> {
  const slug = benchSlug(i);
  const info = vaultSchema.parse({
    slug,
    name: `Bench ${i}`,
    symbol: `B${i}`,
    decimals: 6,
    vaultAddress: benchAddress(i, 0x7a0000),
    accountantAddress: benchAddress(i, 0xacc000),
    chainIds: opts.chainIds,
    chain: {
      primary: { startBlock: 0, accountantType: 'hub' },
      mainnet: { startBlock: 0, accountantType: 'spoke' },
    },
    liquidAssets: [{ contractAddress: opts.usdc, symbol: 'USDC', decimals: 6, chainId: 98866 }],
    ...opts.vault,
  });
  return {
    slug,
    status: 'active',
    updated_at: '2026-01-01 00:00:00.000',
    vault_address: info.vaultAddress,
    name: info.name,
    symbol: info.symbol,
    decimals: 6,
    chain_ids: info.chainIds,
    solana_mint: opts.mint ?? '',
    base_asset_usd_price: '1',
    base_asset_decimals: 6,
    info: JSON.stringify(info),
  };
}
