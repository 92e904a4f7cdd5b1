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
 *   starts from the headers already read, then bisects once timestamps, whole seconds, say no
 *   more (on the sparse bench's steady chains, about 3.5 headers per day at four blocks a
 *   second, 6-7 at forty, where forty blocks share each timestamp).
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
 * already read (those outside `from..to` are ignored), `dayEnds` the headers of a search over a
 * span holding this one (waited for only if a UTC day ends in the range).
 */
export async function rangeHeaders(
  source: HeaderSource,
  from: number,
  to: number,
  windowFrom: number,
  logs: readonly RawLog[],
  early: readonly BlockHeader[] = [],
  dayEnds?: Promise<readonly BlockHeader[]>,
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
  // A search over a wider span (`dayEnds`: never rejects) found these days' ends already.
  if (pending.length && dayEnds)
    for (const h of await dayEnds)
      if (h.number >= from && h.number <= to && !known.has(h.number)) known.set(h.number, h);
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
 * Whether the chain moved while a range was read: two consecutive headers read do not chain (a
 * block known from its logs has no parent hash to check), or a log's block hash is not its
 * block's.
 */
export function movedDuringRead(headers: readonly BlockStamp[], logs: readonly RawLog[]): boolean {
  const hashOf = new Map(headers.map((h) => [h.number, h.hash]));
  return (
    headers.some(
      (h, k) =>
        k > 0 &&
        h.parentHash !== undefined &&
        h.number === headers[k - 1].number + 1 &&
        h.parentHash !== headers[k - 1].hash,
    ) || logs.some((l) => hashOf.get(l.blockNumber) !== l.blockHash)
  );
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
 * `boundary`. Timestamps are whole seconds, and on a fast chain many blocks share one: a block's
 * time is anywhere in its second. While the two known blocks are seconds apart, the guess
 * interpolates between the middles of their seconds, and the pair read is a quarter of a
 * second's worth of blocks either side of it (about the guess's error on a steady chain: one of
 * the pair is then often the day's last block or the next day's first). Once they are a second
 * apart or less (or after `INTERPOLATIONS` rounds), their timestamps say no more: the middle.
 */
function guess(lo: BlockStamp, hi: BlockStamp, boundary: number, interpolate: boolean): number[] {
  const inside = (n: number) => Math.min(hi.number - 1, Math.max(lo.number + 1, n));
  const seconds = hi.timestamp - lo.timestamp;
  if (!interpolate || seconds <= 1) return [inside(Math.floor((lo.number + hi.number) / 2))];
  const perSecond = (hi.number - lo.number) / seconds;
  const at = lo.number + (boundary - lo.timestamp - 0.5) * perSecond;
  const a = inside(Math.ceil(at - perSecond / 4) - 1);
  const b = inside(Math.max(Math.floor(at + perSecond / 4), a + 1));
  return b > a ? [a, b] : [a];
}
