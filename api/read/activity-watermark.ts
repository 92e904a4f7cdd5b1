/**
 * The data watermark behind an answer: the oldest ingest watermark (`chain_watermarks`)
 * among the chains the answer reads, so a client sees how fresh the slowest source is.
 */

import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { Store } from '../../store/client.ts';
import type { RegistryVault } from './registry.ts';

/** The chains a vault's data comes from: its EVM chains, plus Solana when it has a mint. */
export function vaultChains(v: RegistryVault): number[] {
  return v.solanaMint ? [...v.chainIds, SOLANA_CHAIN_ID] : [...v.chainIds];
}

/** Unix seconds of the oldest watermark among `chainIds` (the chains that have one); null when none has. */
export async function oldestWatermark(store: Store, chainIds: Iterable<number>): Promise<number | null> {
  const ids = [...new Set(chainIds)];
  if (ids.length === 0) return null;
  const rows = await store.query<{ w: string | null }>(
    `SELECT toString(toUnixTimestamp(min(block_time))) AS w
     FROM ${store.database}.chain_watermarks WHERE chain_id IN {ids:Array(UInt32)} HAVING count() > 0`,
    { ids },
  );
  return rows.length && rows[0].w !== null ? Number(rows[0].w) : null;
}

/** The oldest watermark behind an answer about `vaults`. */
export function vaultsWatermark(store: Store, vaults: readonly RegistryVault[]): Promise<number | null> {
  return oldestWatermark(store, vaults.flatMap(vaultChains));
}
