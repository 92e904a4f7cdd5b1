/**
 * GET /vaults/holders: per vault the 100 largest (chain, user) balances, ranked on one
 * exact scale across chains, with `holderSince` = the block time at which that balance
 * last went from zero (or less) to positive, and `totalHolders` from `vault_holders`
 * (distinct addresses with a positive balance on any chain, docs/architecture.md, Endpoint semantics).
 * The balances, their decimals and the cross-chain ranking scale are the `holder_values`
 * view's (views/plain/holder_values.sql); `holderSince` is computed here for the 100 rows only, since a
 * view of it for every holder would replay every transfer on each read.
 */
import type { Store } from '../../store/client.ts';
import { toUnits } from './prices.ts';
import type { RegistryVault } from './registry.ts';

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

/** Top holders of each of `vaults` (in their order), optionally on one chain. */
export async function topHolders(
  store: Store,
  vaults: readonly RegistryVault[],
  chainId?: number,
): Promise<VaultTopHolders[]> {
  if (vaults.length === 0) return [];
  const db = store.database;
  const chainFilter = chainId === undefined ? '' : 'AND chain_id = {chain:UInt32}';
  const rows = await store.query<Row>(
    `WITH top AS (
       SELECT vault, chain_id, holder, balance_raw AS bal, share_decimals AS dec, balance_e36 AS scaled
       FROM ${db}.holder_values
       WHERE vault IN {slugs:Array(String)} ${chainFilter}
       ORDER BY vault, scaled DESC, chain_id, holder
       LIMIT ${TOP_HOLDERS} BY vault
     ),
     moves AS (
       SELECT vault, chain_id, side.1 AS holder, side.2 AS d, block_time, block_number, log_index
       FROM ${db}.transfers
       ARRAY JOIN [(from_address, -toInt256(amount)), (to_address, toInt256(amount))] AS side
       WHERE vault IN {slugs:Array(String)} ${chainFilter}
         AND (vault, chain_id, side.1) IN (SELECT vault, chain_id, holder FROM top)
     ),
     since AS (
       SELECT vault, chain_id, holder, maxIf(block_time, running > 0 AND running - d <= 0) AS since
       FROM (
         SELECT vault, chain_id, holder, d, block_time,
           sum(d) OVER (PARTITION BY vault, chain_id, holder ORDER BY block_time, block_number, log_index, d
             ROWS UNBOUNDED PRECEDING) AS running
         FROM moves
       )
       GROUP BY vault, chain_id, holder
     )
     SELECT t.vault AS vault, t.chain_id AS chain_id, t.holder AS holder, toString(t.bal) AS bal, t.dec AS dec,
       toString(toUnixTimestamp(s.since)) AS since
     FROM top AS t
     LEFT JOIN since AS s ON s.vault = t.vault AND s.chain_id = t.chain_id AND s.holder = t.holder
     ORDER BY t.vault, t.scaled DESC, t.chain_id, t.holder`,
    { slugs: vaults.map((v) => v.slug), ...(chainId !== undefined && { chain: chainId }) },
  );
  const counts = await store.query<{ vault: string; holders: string }>(
    `SELECT vault, toString(holders) AS holders FROM ${db}.vault_holders WHERE vault IN {slugs:Array(String)}`,
    { slugs: vaults.map((v) => v.slug) },
  );
  const total = new Map(counts.map((c) => [c.vault, Number(c.holders)]));
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
