/**
 * The follower's read-ahead (ingest/evm/read-ahead.ts) on the sparse chain of the benchmark
 * (devnet/sparse-chain.ts, over HTTP; at most 100 logs an answer): while a taken range is
 * processed, the logs of the two ranges after it are read, one after the other, whether or
 * not the follower took the first of them (one only when the range ahead is full: a dense
 * chain); a take that does not match drops them.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { type SparseChain, sparseVaultConfig, startSparseChain } from '../../devnet/sparse-chain.ts';
import { type ChainReader, TARGET_LOGS } from '../../ingest/evm/chain.ts';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import { RangeReader } from '../../ingest/evm/read-ahead.ts';
import { sparseChainReader } from './evm-support.ts';

let chain: SparseChain;
beforeAll(async () => {
  chain = await startSparseChain({ blocks: 100_000, events: 1_000, maxLogs: 100 });
});
afterAll(() => chain.stop());

function readers(c: SparseChain): { reader: ChainReader; ranges: RangeReader } {
  const config = parseConfig({
    dataDir: '/nonexistent',
    devnet: { enabled: false },
    chains: [{ chainId: 42161, name: 'sparse', rpcUrls: [c.url], confirmations: 0 }],
    vaults: [sparseVaultConfig(c.token)],
  });
  const reader = sparseChainReader(c);
  return { reader, ranges: new RangeReader(reader, chainContracts(config, config.chains[0])) };
}

describe('the range read-ahead', () => {
  it('reads the logs of two ranges beyond the one taken, in order, and drops them on a mismatched take', async () => {
    const { reader, ranges } = readers(chain);
    reader.sizer.size = 5_000;
    const first = await ranges.take(0, chain.head);
    // Not taken again: the two ranges after it are read anyway, and no more.
    await vi.waitFor(() => expect(chain.logRanges).toHaveLength(3), { timeout: 10_000, interval: 10 });
    await new Promise((r) => setTimeout(r, 200));
    expect(chain.logRanges).toHaveLength(3);
    const [, second, third] = chain.logRanges;
    expect(second[0]).toBe(first.to + 1);
    expect(third[0]).toBe(second[1] + 1);

    // Taking the next one reads one more; its logs are the chain's.
    const next = await ranges.take(first.to + 1, chain.head);
    expect(next.to).toBe(second[1]);
    expect(next.logs.map((l) => l.blockNumber)).toEqual(
      chain.eventBlocks.filter((b) => b > first.to && b <= next.to),
    );
    await vi.waitFor(() => expect(chain.logRanges).toHaveLength(4), { timeout: 10_000, interval: 10 });

    // A take elsewhere (a reorg moved the next block back) reads that range afresh.
    const again = await ranges.take(first.to + 1, chain.head);
    expect(chain.logRanges[4][0]).toBe(first.to + 1);
    expect(again.to).toBeGreaterThan(first.to);
    await ranges.settle();
  }, 30_000);
  it('reads one range ahead when it is full (a dense chain)', async () => {
    const dense = await startSparseChain({
      blocks: 60_000,
      events: 3 * TARGET_LOGS,
      maxLogs: 2 * TARGET_LOGS,
    });
    try {
      const { reader, ranges } = readers(dense);
      // About TARGET_LOGS logs a range.
      reader.sizer.size = 20_000;
      await ranges.take(0, dense.head);
      await vi.waitFor(() => expect(dense.logRanges).toHaveLength(2), { timeout: 10_000, interval: 10 });
      await new Promise((r) => setTimeout(r, 300));
      expect(dense.logRanges).toHaveLength(2);
      await ranges.settle();
    } finally {
      await dense.stop();
    }
  }, 30_000);
});
