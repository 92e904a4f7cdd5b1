/**
 * `startBlock: auto` (chains[].startBlock): the chain's first block worth reading is the
 * deployment block of the earliest of its watched contracts, found by a binary search over
 * `eth_getCode` (about log2(head) calls per contract, ~30 on a real chain). A contract without
 * code at the head is not deployed yet and is left out; with none deployed the chain is read
 * from the head on. Historical `eth_getCode` needs an archive node, as the backfill does.
 */
import type { Hex } from 'viem';
import type { ChainReader } from './chain.ts';

export interface Deployment {
  address: Hex;
  /** The block its code first appears at, or null when it has none at the head. */
  block: number | null;
}

/** The first block with code at `address`, searching `0..head`; null when it has none at `head`. */
export async function deploymentBlock(
  reader: ChainReader,
  address: Hex,
  head: number,
): Promise<number | null> {
  if (!(await reader.hasCode(address, head))) return null;
  let lo = 0;
  let hi = head;
  // Invariant: code at `hi`; none below `lo`.
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await reader.hasCode(address, mid)) hi = mid;
    else lo = mid + 1;
  }
  return hi;
}

/** Each address's deployment block (searched at once) and the start: the earliest of them, else `head`. */
export async function autoStartBlock(
  reader: ChainReader,
  addresses: Hex[],
  head: number,
): Promise<{ start: number; deployments: Deployment[] }> {
  const deployments = await Promise.all(
    addresses.map(async (address) => ({ address, block: await deploymentBlock(reader, address, head) })),
  );
  const found = deployments.map((d) => d.block).filter((b): b is number => b !== null);
  return { start: found.length ? Math.min(...found) : head, deployments };
}
