/** Synthetic transfer events for benchmarks: N transfers over V vaults and C chains. */
import type { TransferRecord } from '../schemas/records.ts';

const ZERO = '0x0000000000000000000000000000000000000000';
const hex = (n: number | bigint, bytes: number) =>
  `0x${BigInt(n)
    .toString(16)
    .padStart(bytes * 2, '0')}`;

export const BENCH_CHAINS = [98866, 1, 8453, 56, 9745, 43114, 42161, 480];

export function vaultSlugs(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `bench-vault-${i}`);
}

/** Deterministic transfers: mints, then transfers among 20k holders; ~1 block per 10 events. */
export function* transferEvents(
  total: number,
  vaults: number,
  chains = BENCH_CHAINS,
): Generator<TransferRecord> {
  const slugs = vaultSlugs(vaults);
  const start = Date.UTC(2026, 0, 1) / 1000;
  for (let i = 0; i < total; i++) {
    const vault = slugs[i % vaults];
    const chainId = chains[(i >> 3) % chains.length];
    const block = 1_000_000 + Math.floor(i / 10);
    const holder = hex(0xb0000000 + ((i * 7919) % 20_000), 20);
    const other = hex(0xb0000000 + ((i * 104_729) % 20_000), 20);
    yield {
      chainId,
      blockNumber: block,
      blockHash: hex(BigInt(chainId) * 10n ** 15n + BigInt(block), 32),
      blockTimestamp: start + Math.floor(i / 4),
      txHash: hex(i + 1, 32),
      logIndex: i % 10,
      removed: false,
      vault,
      token: hex(0x7a000 + (i % vaults), 20),
      from: i % 3 === 0 ? ZERO : other,
      to: holder,
      amount: String(1_000_000 + (i % 1000)),
    };
  }
}
