/**
 * What an answer stands on (docs/architecture.md#provenance): the oldest ingest watermark
 * (`chain_watermarks`) among the chains the answer reads, so a client sees how fresh the slowest
 * source is (X-Data-Watermark), and each of those chains' newest stored block: the answer holds
 * every event of that chain up to it (X-Data-Blocks).
 */

import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { Store } from '../../store/client.ts';
import type { ChainBlocks, Provenance } from '../http/provenance.ts';
import type { RegistryVault } from './registry.ts';

/** One chain's watermark: the newest stored block and its time. */
export interface ChainMark {
  /** Unix seconds. */
  time: number;
  block: number;
}

/** The chains a vault's data comes from: its EVM chains, plus Solana when it has a mint. */
export function vaultChains(v: RegistryVault): number[] {
  return v.solanaMint ? [...v.chainIds, SOLANA_CHAIN_ID] : [...v.chainIds];
}

/** chainId -> its watermark, every chain that has one (a few rows: `chain_watermarks` reads the small chain_watermark_raw). */
export async function loadWatermarks(store: Store): Promise<Map<number, ChainMark>> {
  const rows = await store.query<{ chain_id: number; t: string; b: string }>(
    `SELECT chain_id, toString(toUnixTimestamp(block_time)) AS t, toString(block_number) AS b
     FROM ${store.database}.chain_watermarks`,
  );
  return new Map(rows.map((r) => [Number(r.chain_id), { time: Number(r.t), block: Number(r.b) }]));
}

/**
 * The provenance of an answer reading `chainIds`: the oldest watermark among those that have one
 * (null when none has) and the block of each of them.
 */
export function provenanceOf(marks: Map<number, ChainMark>, chainIds: Iterable<number>): Provenance {
  const blocks: ChainBlocks = {};
  let watermark: number | null = null;
  for (const c of new Set(chainIds)) {
    const m = marks.get(c);
    if (!m) continue;
    blocks[c] = m.block;
    watermark = watermark === null ? m.time : Math.min(watermark, m.time);
  }
  return { watermark, blocks };
}

/** The provenance of an answer reading `chainIds`, from the stored watermarks. */
export async function chainsProvenance(store: Store, chainIds: Iterable<number>): Promise<Provenance> {
  return provenanceOf(await loadWatermarks(store), chainIds);
}

/** The provenance of an answer about `vaults`. */
export function vaultsProvenance(store: Store, vaults: readonly RegistryVault[]): Promise<Provenance> {
  return chainsProvenance(store, vaults.flatMap(vaultChains));
}

/**
 * The blocks several parts of an answer all stand on: per chain, the lowest of theirs (each part
 * holds every event up to its own block, so the whole holds every event up to the lowest).
 */
export function commonBlocks(parts: readonly ChainBlocks[]): ChainBlocks {
  const out: ChainBlocks = {};
  for (const p of parts)
    for (const [c, b] of Object.entries(p)) {
      const k = Number(c);
      out[k] = out[k] === undefined ? b : Math.min(out[k], b);
    }
  return out;
}
