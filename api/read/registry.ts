/**
 * The vault registry as the API reads it: the `vault_registry` view (the registry
 * flows through the bus like any other data), with each entry's static VaultInfo
 * fields parsed from its `info` JSON.
 */
import type { VaultConfig } from '../../core/settings/registry.ts';
import type { Store } from '../../store/client.ts';
import { notFound } from '../http/errors.ts';
import type { VaultStatus } from '../http/params.ts';

export interface RegistryVault {
  slug: string;
  status: VaultStatus;
  /** Share token / vault address, lower-case. */
  vaultAddress: string;
  name: string;
  symbol: string;
  decimals: number;
  chainIds: number[];
  /** Solana mint of the share, '' when none. */
  solanaMint: string;
  /** Configured USD price of the base asset, exact decimal string. */
  baseAssetUsdPrice: string;
  baseAssetDecimals: number;
  /** The registry entry as configured (every static VaultInfo field and more). */
  info: VaultConfig;
}

/** The registry columns as the API selects them (vault_registry, or the head's copy of it). */
export interface RegistryRow {
  slug: string;
  status: string;
  vault_address: string;
  name: string;
  symbol: string;
  decimals: number;
  chain_ids: number[];
  solana_mint: string;
  base_asset_usd_price: string;
  base_asset_decimals: number;
  info: string;
}

/** Every registry entry, ordered by slug. */
export async function loadRegistry(store: Store): Promise<RegistryVault[]> {
  const rows = await store.query<RegistryRow>(
    `SELECT slug, ${REGISTRY_COLUMNS} FROM ${store.database}.vault_registry ORDER BY slug`,
  );
  return rows.map(registryVaultOf);
}

/** The registry columns selected for `RegistryVault` (the head selects the same, from its copy). */
export const REGISTRY_COLUMNS = `status, vault_address, name, symbol, decimals, chain_ids, solana_mint,
  toString(base_asset_usd_price) AS base_asset_usd_price, base_asset_decimals, info`;

/** A registry row as the API uses it, its `info` JSON parsed. */
export function registryVaultOf(r: RegistryRow): RegistryVault {
  return {
    slug: r.slug,
    status: r.status as VaultStatus,
    vaultAddress: r.vault_address.toLowerCase(),
    name: r.name,
    symbol: r.symbol,
    decimals: Number(r.decimals),
    chainIds: r.chain_ids.map(Number),
    solanaMint: r.solana_mint,
    baseAssetUsdPrice: r.base_asset_usd_price,
    baseAssetDecimals: Number(r.base_asset_decimals),
    info: JSON.parse(r.info) as VaultConfig,
  };
}

/** The entries whose CMS status is one of `statuses`. */
export async function vaultsWithStatus(
  store: Store,
  statuses: readonly VaultStatus[],
): Promise<RegistryVault[]> {
  return (await loadRegistry(store)).filter((v) => statuses.includes(v.status));
}

/** The entry of `slug` (any status); a 404 `NOT_FOUND` when there is none. */
export async function vaultBySlug(store: Store, slug: string): Promise<RegistryVault> {
  const found = (await loadRegistry(store)).find((v) => v.slug === slug);
  if (!found) throw notFound('vault', slug);
  return found;
}
