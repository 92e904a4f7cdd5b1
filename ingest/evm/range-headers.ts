/**
 * The block headers a range needs, and only those (docs/architecture.md#reading-a-chain): on a
 * real chain almost no block holds a watched log, so reading every header would make the
 * ingester's cost grow with the chain's length. A range reads the header of:
 * - its first block (its parent hash joins it to the previous range: a reorg shows there);
 * - its last block (the chain's watermark moves on to it);
 * - each block holding a matched log (its timestamp, and its hash checked against the log's),
 *   unless every log of the block carries the block's hash and timestamp (`blockTimestamp`:
 *   recent geth, reth and anvil put it on each log): such a block is known from its logs, a
 *   `BlockStamp` without parent hash, and no header is read for it. Its parent hash is needed
 *   only where hashes are chained: the range's first block and the reorg window, read anyway.
 *   Below the window the log's hash is the block's identity in the tip (a reorg that deep is
 *   beyond the window), and `blocks_raw` stores only the headers read;
 * - each block of the reorg window below the head (consecutive parent hashes for live following);
 * - the last block of each UTC day that ends inside the range (the day's close: its snapshot,
 *   and the block settling the day), found by an interpolation search on timestamps that
 *   starts from the headers already read (about two headers per day on a steady chain).
 */
import type { BlockHeader, BlockStamp } from './chain.ts';
import type { RawLog } from './decode.ts';

const DAY = 86_400;
/** Interpolation guesses per day boundary before the search falls back to bisection. */
const INTERPOLATIONS = 4;

export interface HeaderSource {
  headersAt(numbers: number[]): Promise<BlockHeader[]>;
}

/**
 * Blocks of `from..to` that the follower needs (see the module comment), oldest first: headers
 * read, and blocks known from their logs only. `windowFrom` is the oldest block of the reorg
 * window (every block from there on is read), `logs` the range's matched logs, `early` headers
 * already read (those outside `from..to` are ignored).
 */
export async function rangeHeaders(
  source: HeaderSource,
  from: number,
  to: number,
  windowFrom: number,
  logs: readonly RawLog[],
  early: readonly BlockHeader[] = [],
): Promise<BlockStamp[]> {
  const known = new Map<number, BlockStamp>();
  for (const h of early) if (h.number >= from && h.number <= to) known.set(h.number, h);
  const read = async (numbers: Iterable<number>) => {
    const fresh = [...new Set(numbers)].filter((n) => !known.has(n)).sort((a, b) => a - b);
    for (const h of await source.headersAt(fresh)) known.set(h.number, h);
  };
  const stamps = logStamps(logs);
  const wanted = [from, to];
  for (const l of logs) if (!stamps.has(l.blockNumber)) wanted.push(l.blockNumber);
  for (let n = Math.max(from, windowFrom); n <= to; n++) wanted.push(n);
  await read(wanted);
  // The rest of the log blocks are known from their logs (and guide the day-end search too).
  for (const [n, stamp] of stamps) if (!known.has(n)) known.set(n, stamp);
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

/**
 * The blocks whose every log carries the block's timestamp, all with the same block hash: their
 * hash and timestamp are known without a header read. A block with one log lacking them (or
 * hashes that differ: the chain moved during the answer) is read, and checked, as before.
 */
function logStamps(logs: readonly RawLog[]): Map<number, BlockStamp> {
  const stamps = new Map<number, BlockStamp>();
  const unstamped = new Set<number>();
  for (const l of logs) {
    const n = l.blockNumber;
    if (unstamped.has(n)) continue;
    const seen = stamps.get(n);
    const t = l.blockTimestamp;
    if (
      t === undefined ||
      !Number.isSafeInteger(t) ||
      (seen && (seen.hash !== l.blockHash || seen.timestamp !== t))
    ) {
      unstamped.add(n);
      stamps.delete(n);
    } else if (!seen) stamps.set(n, { number: n, hash: l.blockHash, timestamp: t });
  }
  return stamps;
}

/** The newest known block before `boundary` and the oldest at or after it (both exist: the range's ends). */
function around(sorted: BlockStamp[], boundary: number): [BlockStamp, BlockStamp] {
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
function guess(lo: BlockStamp, hi: BlockStamp, boundary: number, interpolate: boolean): number[] {
  const inside = (n: number) => Math.min(hi.number - 1, Math.max(lo.number + 1, n));
  if (!interpolate) return [inside(Math.floor((lo.number + hi.number) / 2))];
  const share = (boundary - lo.timestamp) / (hi.timestamp - lo.timestamp);
  const g = inside(lo.number + Math.ceil(share * (hi.number - lo.number)));
  return g - 1 > lo.number ? [g - 1, g] : [g];
}
