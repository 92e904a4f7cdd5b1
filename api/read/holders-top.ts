/**
 * GET /vaults/holders: per vault the 100 largest (chain, user) balances, ranked on one
 * exact scale across chains, with `holderSince` = the block time at which that balance
 * last went from zero (or less) to positive, and `totalHolders` (distinct addresses with a
 * positive balance on any chain, docs/architecture.md, Endpoint semantics).
 * Both are read from what views/settle.ts stores: the rows of the `vault_top_holders` view
 * (views/plain/vault_top_holders.sql: each vault's 100 largest balances and each chain's, so
 * the answer with a chainId is among them too) in `metrics_top_holders`, and `vault_holders`'
 * count in `metrics_vault_current`; the answer reads its own rows, not every balance or transfer.
 */
import type { Store } from '../../store/client.ts';
import { toUnits } from './prices.ts';
import type { RegistryVault } from './registry.ts';

/** Holders per vault in the answer (the view stores as many per vault and per chain). */
export const TOP_HOLDERS = 100;

export interface TopHolder {
  chainId: number;
  user: string;
  balance: number;
  holderSince: number;
}

export interface VaultTopHolders {
  vaultAddress: string;
  totalHolders: number;
  holders: TopHolder[];
}

interface Row {
  vault: string;
  chain_id: number;
  holder: string;
  bal: string;
  dec: number;
  since: string;
}

/**
 * Top holders of each of `vaults` (in their order), optionally on one chain; `totals`: each vault's
 * holder count when the caller has it (the vault heads hold metrics_vault_current's), else it is read.
 */
export async function topHolders(
  store: Store,
  vaults: readonly RegistryVault[],
  chainId?: number,
  totals?: ReadonlyMap<string, number>,
): Promise<VaultTopHolders[]> {
  if (vaults.length === 0) return [];
  const db = store.database;
  const chainFilter = chainId === undefined ? '' : 'AND chain_id = {chain:UInt32}';
  const params = { slugs: vaults.map((v) => v.slug), ...(chainId !== undefined && { chain: chainId }) };
  const rows = await store.query<Row>(
    `SELECT toString(vault) AS vault, chain_id, holder, toString(balance_raw) AS bal, share_decimals AS dec,
       toString(toUnixTimestamp(since)) AS since
     FROM ${db}.metrics_top_holders FINAL
     WHERE vault IN {slugs:Array(String)} ${chainFilter}
     ORDER BY vault, balance_e36 DESC, chain_id, holder
     LIMIT ${TOP_HOLDERS} BY vault`,
    params,
  );
  const total =
    totals ??
    new Map(
      (
        await store.query<{ vault: string; holders: string }>(
          `SELECT toString(vault) AS vault, toString(holders) AS holders FROM ${db}.metrics_vault_current FINAL
           WHERE vault IN {slugs:Array(String)}`,
          params,
        )
      ).map((c) => [c.vault, Number(c.holders)]),
    );
  return vaults.map((v) => ({
    vaultAddress: v.vaultAddress,
    totalHolders: total.get(v.slug) ?? 0,
    holders: rows
      .filter((r) => r.vault === v.slug)
      .map((r) => ({
        chainId: Number(r.chain_id),
        user: r.holder,
        balance: toUnits(BigInt(r.bal), Number(r.dec)),
        holderSince: Number(r.since),
      })),
  }));
}
