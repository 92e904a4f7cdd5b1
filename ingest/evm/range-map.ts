/**
 * A range's logs as the events it publishes: decoded, with the tokens' decimals, the accountants'
 * accrued fees and the deposit fees in force (the follower's step between reading a range and
 * publishing it, ingest/evm/follower.ts).
 */
import { accrue } from './accrual.ts';
import type { BlockStamp, ChainReader } from './chain.ts';
import type { ChainContracts } from './contracts.ts';
import type { RawLog } from './decode.ts';
import { depositFees } from './deposit-fees.ts';
import { mapLogs } from './map.ts';
import type { Emitted } from './map-context.ts';
import { decodeRange, readDecimals } from './range-decode.ts';
import type { ChainCheckpoint } from './reorg.ts';

/** What the follower keeps across ranges for the mapping. */
export interface RangeCaches {
  /** Decoded events with no family to publish into, by `role.event` (added to). */
  unpublished: Map<string, number>;
  /** Token decimals read so far, by address. */
  decimals: Map<string, number>;
  /** Accountants' base assets read so far. */
  baseOf: Map<string, string>;
}

/** A range's events, and the fee marks its mapping moved: copies, applied once it is published. */
export interface MappedRange {
  events: Emitted[];
  owed: ChainCheckpoint['owed'];
  feeMarks: NonNullable<ChainCheckpoint['depositFees']>;
}

/**
 * Maps one range. The fee marks are mapped on copies of the checkpoint's: if publishing fails,
 * the retried range must see them as they were.
 */
export async function mapRange(
  deps: { reader: ChainReader; contracts: ChainContracts },
  caches: RangeCaches,
  state: Pick<ChainCheckpoint, 'owed' | 'depositFees'>,
  range: { logs: RawLog[]; to: number; headers: BlockStamp[] },
): Promise<MappedRange> {
  const { reader, contracts } = deps;
  const { logs, to, headers } = range;
  const decoded = decodeRange(contracts, logs, caches.unpublished);
  await readDecimals(reader, contracts, decoded, to, caches.decimals);
  const timeOf = new Map(headers.map((h) => [h.number, h.timestamp]));
  const ctx = { contracts, blockTime: (n: number) => timeOf.get(n) as number };
  const owed = structuredClone(state.owed);
  const accrual = await accrue(reader, ctx, decoded, owed, caches.baseOf);
  const feeMarks = structuredClone(state.depositFees ?? {});
  const fees = await depositFees(reader, decoded, feeMarks);
  const mapped = mapLogs(
    {
      ...ctx,
      decimals: caches.decimals,
      pausedAfter: (a, n) => accrual.paused.get(`${a}:${n}`) ?? false,
      depositFee: (d) => fees.get(d),
    },
    decoded,
  );
  for (const [k, n] of mapped.unpublished) caches.unpublished.set(k, (caches.unpublished.get(k) ?? 0) + n);
  const events = [...mapped.emitted, ...accrual.fees].sort(
    (a, b) => (a.record.blockNumber as number) - (b.record.blockNumber as number),
  );
  return { events, owed, feeMarks };
}
