/**
 * The follower's reorg window: the ingested blocks read within `reorgWindow` of the newest,
 * with what was published for them (the checkpoint's `tip`), the true common ancestor with the canonical
 * chain after a reorg, and the retraction (`removed: true`, newest first) of every record
 * and header published above it; the checkpoint that keeps the window. See `follower.ts`.
 */
import type { Hex } from 'viem';
import { VaultstreamError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { CheckpointFile } from '../checkpoint.ts';
import type { OwedMark } from './accrual.ts';
import { type BlockStamp, type ChainReader, isHeader } from './chain.ts';
import type { ChainContracts } from './contracts.ts';
import type { FeeSettingMark } from './deposit-fees.ts';
import type { Emitted } from './map-context.ts';
import { blockEmitted, type PublishEmitted, retraction } from './publish.ts';

/**
 * An ingested block of the reorg window, with what was published for it: its header, or (below
 * the head's window) only its hash and timestamp from its logs (range-headers.ts).
 */
export interface TipBlock extends BlockStamp {
  events: Emitted[];
}

/** The follower's checkpoint: where to go on, and the reorg window. */
export interface ChainCheckpoint {
  chainId: number;
  /** The next block to ingest. */
  next: number;
  /**
   * The ingested blocks whose headers were read, within `reorgWindow` of the newest, oldest
   * first; the last is `next - 1`. Every block published for is among them; below the head's
   * reorg window a range reads only the blocks it needs (range-headers.ts), so they need not be
   * consecutive.
   */
  tip: TipBlock[];
  /** The first block read: the configured startBlock, or the one `startBlock: auto` found (deployment.ts). */
  startBlock?: number;
  /** Hash of block 0 of the chain this checkpoint was written for (absent in checkpoints before it was kept). */
  genesis?: Hex;
  owed: Record<string, OwedMark>;
  /** Deposit-fee setting of each NestVault as last seen (absent in checkpoints before it was kept). */
  depositFees?: Record<string, FeeSettingMark>;
  /** Wall-clock time of the last periodic snapshot, ms. */
  lastSnapshotAt: number;
}

/**
 * The chain cannot be followed on without leaving wrong data (a reorg deeper than the
 * kept window, another chain behind the RPC URL): the ingester stops it and says why.
 */
export class ChainStopped extends VaultstreamError {
  constructor(
    message: string,
    readonly reason: 'REORG_TOO_DEEP' | 'GENESIS_MISMATCH',
  ) {
    super('INTERNAL', message, { details: { reason } });
    this.name = 'ChainStopped';
  }
}

/** `tip` with the blocks of `headers` and their `events` added, cut to the newest `window` blocks. */
export function extendTip(
  tip: TipBlock[],
  headers: BlockStamp[],
  events: Emitted[],
  window: number,
): TipBlock[] {
  const first = (headers.at(-1) as BlockStamp).number - window + 1;
  const byBlock = new Map<number, Emitted[]>();
  for (const e of events) {
    const n = e.record.blockNumber as number;
    if (n < first) continue;
    const list = byBlock.get(n);
    if (list) list.push(e);
    else byBlock.set(n, [e]);
  }
  const added = headers
    .filter((h) => h.number >= first)
    .map((h) => ({ ...h, events: byBlock.get(h.number) ?? [] }));
  return [...tip, ...added].filter((b) => b.number >= first);
}

/** READ rates carry their block's identity: kept with the block in the tip so a reorg retracts them too. */
export function keepRates(tip: TipBlock[], records: Emitted[]): void {
  for (const r of records) {
    if (r.family !== 'rates') continue;
    tip.find((b) => b.hash === r.record.blockHash)?.events.push(r);
  }
}

/**
 * How many of the oldest tip blocks are still canonical: the true common ancestor is the
 * newest of them. Throws `ChainStopped` when not even the oldest tip block is canonical
 * any more (and the window does not reach back to the start block).
 */
export async function keptBlocks(
  reader: ChainReader,
  chain: ChainContracts['chain'],
  tip: TipBlock[],
  head: number,
  startBlock: number,
): Promise<number> {
  const oldest = tip[0];
  const canonical = new Map<number, Hex>();
  const parents = new Map<number, Hex>();
  const held = tip.filter((b) => b.number <= head).map((b) => b.number);
  for (const h of await reader.headersAt(held)) {
    canonical.set(h.number, h.hash);
    parents.set(h.number, h.parentHash);
  }
  let keep = tip.length;
  while (keep > 0 && canonical.get(tip[keep - 1].number) !== tip[keep - 1].hash) keep--;
  // A kept block known from its logs only now has its header read (the same hash): the ancestor
  // is published again after the retraction (retractOrphans), as a header.
  for (const b of tip.slice(0, keep)) b.parentHash ??= parents.get(b.number);
  // With the whole history in the window (it starts at the start block), there is no older record to miss.
  if (keep === 0 && oldest.number > startBlock)
    throw new ChainStopped(
      `chain ${chain.name} (${chain.chainId}) reorganized deeper than the ${tip.length} blocks kept ` +
        `(${oldest.number}..${(tip.at(-1) as TipBlock).number}): the records of older orphaned blocks cannot be ` +
        "retracted, so ingestion stopped. Raise the chain's reorgWindow and re-ingest it from a clean checkpoint",
      'REORG_TOO_DEEP',
    );
  return keep;
}

/**
 * Cuts `state`'s tip to its `keep` oldest blocks, resumes after the newest of them, and
 * publishes the retraction of everything above it, newest first; drops the accrual and
 * deposit-fee marks of orphaned blocks and saves the checkpoint. Returns how many blocks.
 */
export async function retractOrphans(
  state: ChainCheckpoint,
  keep: number,
  deps: {
    contracts: ChainContracts;
    publish: PublishEmitted;
    checkpoint: CheckpointFile<ChainCheckpoint>;
    log: Logger;
  },
): Promise<number> {
  const tip = state.tip;
  const chain = deps.contracts.chain;
  const orphaned = tip.slice(keep).reverse();
  state.tip = tip.slice(0, keep);
  state.next = keep ? tip[keep - 1].number + 1 : tip[0].number;
  // A block known from its logs only has no blocks_raw row to retract.
  const retractions = orphaned.flatMap((b) => [
    ...[...b.events].reverse().map(retraction),
    ...(isHeader(b) ? [blockEmitted(chain.chainId, b, true)] : []),
  ]);
  // The ancestor again, last: the chain's watermark (chain_watermark_raw keeps the newest block
  // row published) goes back to it rather than stay on an orphaned block. keptBlocks read its header.
  const ancestor = keep ? state.tip[keep - 1] : undefined;
  if (ancestor && isHeader(ancestor)) retractions.push(blockEmitted(chain.chainId, ancestor));
  await deps.publish(retractions);
  for (const [acc, mark] of Object.entries(state.owed)) if (mark.block >= state.next) delete state.owed[acc];
  for (const [vault, mark] of Object.entries(state.depositFees ?? {}))
    if (mark.block >= state.next) delete state.depositFees?.[vault];
  await deps.checkpoint.saveAsync(state);
  deps.log.warn(
    {
      chainId: chain.chainId,
      orphaned: orphaned.length,
      ancestor: state.next - 1,
      resumeAt: state.next,
      retractions: retractions.length,
    },
    'reorg: orphaned blocks retracted',
  );
  return orphaned.length;
}
