/**
 * The vaults an answer is about and the data watermark behind it, in one short read when the
 * settle step has written the vaults' heads (`metrics_vault_head`, api/read/vault-head.ts): the
 * head holds the registry entry and the vault's watermark as of the last settle, which the
 * settled tables (holders, holder counts) reflect, and which is never newer than the current
 * one (a watermark only vouches for data up to it), and the blocks of its chains as that settle
 * saw them. Before the first settle, the registry and `chain_watermarks` are read
 * (vaultsWithStatus / vaultBySlug and vaultsProvenance).
 * From the heads also each vault's holder count (`holders`: metrics_vault_current's, written by
 * the same settle), which /vaults/holders answers as totalHolders.
 */
import type { Store } from '../../store/client.ts';
import type { Provenance } from '../http/provenance.ts';
import { vaultsProvenance } from './activity-watermark.ts';
import { type RegistryVault, vaultBySlug, vaultsWithStatus } from './registry.ts';
import { type HeadSelection, headsProvenance, loadHeads } from './vault-head.ts';

export async function vaultsWatermarked(
  store: Store,
  which: HeadSelection,
): Promise<Provenance & { vaults: RegistryVault[]; holders?: Map<string, number> }> {
  const heads = await loadHeads(store, which);
  if (heads.length)
    return {
      vaults: heads.map((h) => h.vault),
      ...headsProvenance(heads),
      holders: new Map(heads.map((h) => [h.vault.slug, Number(h.row.holders)])),
    };
  const vaults =
    'slug' in which ? [await vaultBySlug(store, which.slug)] : await vaultsWithStatus(store, which.statuses);
  return { vaults, ...(await vaultsProvenance(store, vaults)) };
}
