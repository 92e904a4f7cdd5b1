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

const DAY = 86_400;
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
  it("searches a backfill's day ends once, and reads their snapshots in one batch", async () => {
    // Six UTC days at four blocks a second.
    const days = await startSparseChain({ blocks: 2_000_000, events: 500 });
    try {
      const { reader, ranges } = readers(days);
      reader.sizer.size = 20_000;
      const closes = new Set<number>();
      let ranged = 0;
      for (let from = 0; from <= days.head; ranged++) {
        const range = await ranges.take(from, days.head);
        for (const [n, read] of range.closes) {
          closes.add(n);
          await read;
        }
        from = range.to + 1;
      }
      await ranges.settle();
      // The chain's own answer: the last block before each UTC midnight between its first and last block.
      const truth: number[] = [];
      for (let day = Math.floor(days.timeOf(0) / DAY) + 1; day * DAY <= days.timeOf(days.head); day++) {
        let lo = 0;
        let hi = days.head;
        while (lo < hi) {
          const mid = Math.ceil((lo + hi) / 2);
          if (days.timeOf(mid) < day * DAY) lo = mid;
          else hi = mid - 1;
        }
        truth.push(lo);
      }
      expect(truth.length).toBeGreaterThanOrEqual(5);
      expect([...closes].sort((a, b) => a - b)).toEqual(truth);
      // Each day's snapshot read once: one read alone (whether Multicall3 answers on the chain),
      // then the rest in one batch.
      expect(days.counts.get('eth_call')).toBe(truth.length);
      expect(days.requestsByMethod.get('eth_call')).toBe(2);
      // Each day's end searched once: the ranges' ends and the window, and a few headers a day.
      const window = 64;
      expect(days.counts.get('eth_getBlockByNumber')).toBeLessThanOrEqual(
        2 * ranged + 2 + window + 4 * truth.length,
      );
    } finally {
      await days.stop();
    }
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
