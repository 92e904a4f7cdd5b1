/**
 * Synthetic transfer events: N transfers over V vaults and C chains, deterministic. The
 * pipeline and engine benchmarks publish them; the TSV encoder's tests encode them.
 */
import type { TransferRecord } from '../schemas/records.ts';

const ZERO = '0x0000000000000000000000000000000000000000';
/** `n` as a 0x-prefixed hex string of `bytes` bytes (n below 2^53: no BigInt). */
const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, '0')}`;

export const BENCH_CHAINS = [98866, 1, 8453, 56, 9745, 43114, 42161, 480];

export function vaultSlugs(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `bench-vault-${i}`);
}

const HOLDERS = 20_000;

/**
 * Deterministic transfers: mints, then transfers among 20k holders; ~1 block per 10 events.
 * Addresses are made once: producing the data should cost little next to the pipeline.
 */
export function* transferEvents(
  total: number,
  vaults: number,
  chains = BENCH_CHAINS,
): Generator<TransferRecord> {
  const slugs = vaultSlugs(vaults);
  const tokens = slugs.map((_, v) => hex(0x7a000 + v, 20));
  const holders = Array.from({ length: HOLDERS }, (_, h) => hex(0xb0000000 + h, 20));
  const start = Date.UTC(2026, 0, 1) / 1000;
  for (let i = 0; i < total; i++) {
    const chainId = chains[(i >> 3) % chains.length];
    const block = 1_000_000 + Math.floor(i / 10);
    yield {
      chainId,
      blockNumber: block,
      // Unique per (chain, block): the chain id in the high bytes, the block number below.
      blockHash: `0x${chainId.toString(16).padStart(16, '0')}${block.toString(16).padStart(48, '0')}`,
      blockTimestamp: start + Math.floor(i / 4),
      txHash: hex(i + 1, 32),
      logIndex: i % 10,
      removed: false,
      vault: slugs[i % vaults],
      token: tokens[i % vaults],
      from: i % 3 === 0 ? ZERO : holders[(i * 104_729) % HOLDERS],
      to: holders[(i * 7919) % HOLDERS],
      amount: String(1_000_000 + (i % 1000)),
    };
  }
}
