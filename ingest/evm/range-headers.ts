/**
 * The block headers a range needs, and only those (docs/architecture.md#reading-a-chain): on a
 * real chain almost no block holds a watched log, so reading every header would make the
 * ingester's cost grow with the chain's length. A range reads the header of:
 * - its first block (its parent hash joins it to the previous range: a reorg shows there);
 * - its last block (the chain's watermark moves on to it);
 * - each block holding a matched log (its timestamp, and its hash checked against the log's);
 * - each block of the reorg window below the head (consecutive parent hashes for live following);
 * - the last block of each UTC day that ends inside the range (the day's close: its snapshot,
 *   and the block settling the day), found by an interpolation search on timestamps that
 *   starts from the headers already read (about two headers per day on a steady chain).
 */
import type { BlockHeader } from './chain.ts';

const DAY = 86_400;
/** Interpolation guesses per day boundary before the search falls back to bisection. */
const INTERPOLATIONS = 4;

export interface HeaderSource {
  headersAt(numbers: number[]): Promise<BlockHeader[]>;
}

/**
 * Headers of `from..to` that the follower needs (see the module comment), oldest first:
 * `windowFrom` is the oldest block of the reorg window (every block from there on is read),
 * `logBlocks` the blocks holding matched logs.
 */
export async function rangeHeaders(
  source: HeaderSource,
  from: number,
  to: number,
  windowFrom: number,
  logBlocks: Iterable<number>,
): Promise<BlockHeader[]> {
  const known = new Map<number, BlockHeader>();
  const read = async (numbers: Iterable<number>) => {
    const fresh = [...new Set(numbers)].filter((n) => !known.has(n)).sort((a, b) => a - b);
    for (const h of await source.headersAt(fresh)) known.set(h.number, h);
  };
  const wanted = [from, to, ...logBlocks];
  for (let n = Math.max(from, windowFrom); n <= to; n++) wanted.push(n);
  await read(wanted);
  const first = known.get(from) as BlockHeader;
  const last = known.get(to) as BlockHeader;
  // Every UTC day boundary B with ts(from) < B <= ts(to): the day before B ends inside the range.
  let pending: number[] = [];
  for (let day = Math.floor(first.timestamp / DAY) + 1; day * DAY <= last.timestamp; day++)
    pending.push(day * DAY);
  for (let round = 0; pending.length; round++) {
    const sorted = [...known.values()].sort((a, b) => a.number - b.number);
    const probes: number[] = [];
    const open: number[] = [];
    for (const boundary of pending) {
      const [lo, hi] = around(sorted, boundary);
      if (hi.number === lo.number + 1) continue; // lo is the day's last block
      open.push(boundary);
      probes.push(...guess(lo, hi, boundary, round < INTERPOLATIONS));
    }
    pending = open;
    if (probes.length) await read(probes);
  }
  return [...known.values()].sort((a, b) => a.number - b.number);
}

/** The newest known header before `boundary` and the oldest at or after it (both exist: the range's ends). */
function around(sorted: BlockHeader[], boundary: number): [BlockHeader, BlockHeader] {
  let lo = 0;
  let hi = sorted.length - 1;
  // Invariant: sorted[lo].timestamp < boundary <= sorted[hi].timestamp.
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid].timestamp < boundary) lo = mid;
    else hi = mid;
  }
  return [sorted[lo], sorted[hi]];
}

/**
 * Blocks to read next between `lo` and `hi` (exclusive) for the first block at or after
 * `boundary`: the interpolated guess and the block before it (when the chain keeps its pace,
 * one of the two is the day's last block and the other the next day's first), or the middle.
 */
function guess(lo: BlockHeader, hi: BlockHeader, boundary: number, interpolate: boolean): number[] {
  const inside = (n: number) => Math.min(hi.number - 1, Math.max(lo.number + 1, n));
  if (!interpolate) return [inside(Math.floor((lo.number + hi.number) / 2))];
  const share = (boundary - lo.timestamp) / (hi.timestamp - lo.timestamp);
  const g = inside(lo.number + Math.ceil(share * (hi.number - lo.number)));
  return g - 1 > lo.number ? [g - 1, g] : [g];
}
