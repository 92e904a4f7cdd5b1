/**
 * The search for the last block of each UTC day in a range (ingest/evm/range-headers.ts), over
 * HTTP against the sparse chain of the benchmark (devnet/sparse-chain.ts), which counts the
 * header calls. The same five-odd UTC days at four blocks a second and at forty (whole-second
 * timestamps: forty blocks share each one): every day's last block is found, and the search
 * reads a few headers per day, not a number that grows with the blocks of a second.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type SparseChain, startSparseChain } from '../../devnet/sparse-chain.ts';
import { rangeHeaders } from '../../ingest/evm/range-headers.ts';
import { sparseChainReader } from './evm-support.ts';

const DAY = 86_400;
let chain: SparseChain | undefined;
afterEach(() => chain?.stop());

describe('the day-end search', () => {
  it.each([
    // blocks, ms per block, most headers per day
    [2_000_000, 250, 4],
    [20_000_000, 25, 8],
  ])(
    '%i blocks %i ms apart: every day close found, at most %i headers a day',
    async (blocks, ms, most) => {
      chain = await startSparseChain({ blocks, events: 500, blockTimeMs: ms });
      const c = chain;
      const reader = sparseChainReader(c);
      // Two ranges, as a backfill reads them: the logs (whose timestamps guide the search), then the headers.
      const half = Math.floor(c.head / 2);
      let searched = 0;
      let days = 0;
      const found: number[] = [];
      for (const [from, to] of [
        [0, half],
        [half + 1, c.head],
      ]) {
        reader.sizer.size = to - from + 1;
        const { logs } = await reader.logs(from, to);
        const before = c.counts.get('eth_getBlockByNumber') ?? 0;
        const stamps = await rangeHeaders(reader, from, to, c.head + 1, logs);
        // Less the range's first and last block.
        searched += (c.counts.get('eth_getBlockByNumber') ?? 0) - before - 2;
        for (let b = Math.floor(c.timeOf(from) / DAY) + 1; b * DAY <= c.timeOf(to); b++) {
          days++;
          const k = stamps.findIndex((s) => s.timestamp >= b * DAY);
          // The day's last block and the next day's first are both known, and adjacent.
          expect(stamps[k - 1].number + 1, `day ending at ${b * DAY}`).toBe(stamps[k].number);
          found.push(stamps[k - 1].number);
        }
      }
      // The chain's own answer: the last block whose time is before each boundary.
      const truth = found.map((n) => {
        const boundary = Math.floor(c.timeOf(n + 1) / DAY) * DAY;
        return c.timeOf(n) < boundary && c.timeOf(n + 1) >= boundary;
      });
      expect(truth.every(Boolean)).toBe(true);
      expect(days).toBe(5);
      expect(searched / days).toBeLessThanOrEqual(most);
    },
    60_000,
  );
});
