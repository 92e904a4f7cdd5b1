/**
 * Follows one EVM chain: block ranges from the checkpoint up to `confirmations` blocks below
 * the head, each as logs + the headers it needs (`range-headers.ts`) -> decoded events ->
 * records, published, then checkpointed (`<dataDir>/ingest/evm-<chainId>.json`, replaced
 * atomically). The blocks whose headers were read within `reorgWindow` of the newest stay in
 * the checkpoint's `tip` with their hashes and the records published for them. A range whose
 * first parent hash is not the tip's last hash, or a tip block no longer canonical, is a reorg:
 * above the common ancestor (the newest tip block still canonical) every record and header is
 * published again with `removed: true` (newest first), and ingestion resumes at the ancestor + 1.
 * A reorg below the whole window cannot be retracted exactly: the follower stops
 * (`ChainStopped`). The genesis hash is kept too: a checkpoint never resumes on another chain.
 * A crash between publishing and checkpointing re-publishes the same records on restart
 * (identical events, which the consumers drop); nothing is skipped. Within the window, a range's
 * checkpoint is written while it is published and replaces the old one once that is durable
 * (`saveAfter`). Deeper, a range's publish goes on while the next range is processed (`inflight`);
 * if it fails the state goes back to what was published. The reorg window and its retraction
 * are in `reorg.ts`, the range reads (and read-ahead) in `read-ahead.ts`.
 */
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { CheckpointFile } from '../checkpoint.ts';
import { type BlockHeader, type BlockStamp, type ChainReader, isHeader } from './chain.ts';
import type { ChainContracts } from './contracts.ts';
import { autoStartBlock } from './deployment.ts';
import type { Emitted } from './map-context.ts';
import { blockEmitted, type PublishEmitted } from './publish.ts';
import { movedDuringRead } from './range-headers.ts';
import { type MappedRange, mapRange } from './range-map.ts';
import { RangeReader } from './read-ahead.ts';
import {
  type ChainCheckpoint,
  ChainStopped,
  extendTip,
  keepRates,
  keptBlocks,
  retractOrphans,
} from './reorg.ts';
import { isFault } from './rpc.ts';
import { dayCloseSnapshots, takeSnapshot } from './snapshots.ts';
import { copyState } from './state-copy.ts';

export interface FollowerOptions {
  contracts: ChainContracts;
  reader: ChainReader;
  publish: PublishEmitted;
  checkpoint: CheckpointFile<ChainCheckpoint>;
  log: Logger;
  clock: () => number;
  snapshotIntervalSeconds: number;
  /** Told about a failed snapshot (the caller publishes a source error); the round goes on. */
  onSnapshotError: (err: unknown) => void;
}

/** What a round did. */
export interface RoundResult {
  /** Blocks ingested (0 when caught up). */
  blocks: number;
  events: number;
  /** Blocks retracted by a reorg. */
  retracted: number;
}

/** Least time between two checkpoint writes while backfilling below the reorg window. */
const CHECKPOINT_EVERY_MS = 1_000;
/** Most time a known head is reused while backfilling deeper than the reorg window. */
const HEAD_EVERY_MS = 1_000;

export class ChainFollower {
  private state: ChainCheckpoint;
  /** The newest block it may ingest: the chain's head less `confirmations` (-1 before the first round). */
  head = -1;
  /** The chain's head as last asked, and when (performance.now()). */
  chainHead = -1;
  private headAt = Number.NEGATIVE_INFINITY;
  /** Decoded events with no family to publish into, by `role.event`. */
  readonly unpublished = new Map<string, number>();
  private readonly decimals = new Map<string, number>();
  private readonly baseOf = new Map<string, string>();
  private genesisChecked = false;
  /** The range reads, with those read ahead while backfilling. */
  private readonly ranges: RangeReader;
  /** When the checkpoint was last saved (performance.now()), and whether the state moved on since. */
  private savedAt = Number.NEGATIVE_INFINITY;
  private unsaved = false;
  /** A checkpoint write not waited for (deep below the window; failure handled). */
  private saving: Promise<void> | undefined;
  /** A deep range's publish not waited for (`done`: settled, never rejects) and the state before it. */
  private inflight: { done: Promise<{ error?: unknown }>; before: ChainCheckpoint } | undefined;
  /** The first checkpoint, holding the genesis hash: durable before anything is published. */
  private genesisSaving: Promise<void> | undefined;

  constructor(private readonly deps: FollowerOptions) {
    const chain = deps.contracts.chain;
    this.ranges = new RangeReader(deps.reader, deps.contracts);
    const configured = typeof chain.startBlock === 'number' ? chain.startBlock : undefined;
    const saved = deps.checkpoint.load();
    this.state = saved ?? {
      chainId: chain.chainId,
      next: configured ?? 0,
      tip: [],
      owed: {},
      lastSnapshotAt: 0,
    };
    // A checkpoint from before startBlock was kept started at the configured block.
    this.state.startBlock ??= saved ? (configured ?? 0) : configured;
    this.resumedAt = this.state.next;
    this.durableNext = this.state.next;
  }

  /** The next block to ingest as the bus has it (`state.next` moves on as a range's publish starts). */
  get next(): number {
    return Math.min(this.state.next, this.durableNext);
  }
  private durableNext: number;

  /** The block this process started ingesting at (the first block `startBlock: auto` found, on a first start). */
  resumedAt: number;

  /** `startBlock: auto` on a first start: the earliest deployment block of the watched contracts. */
  private async findStart(): Promise<void> {
    const { contracts, reader, log } = this.deps;
    const { start, deployments } = await autoStartBlock(reader, contracts.addresses, this.chainHead);
    this.state.startBlock = start;
    this.state.next = start;
    this.durableNext = start;
    this.resumedAt = start;
    await this.deps.checkpoint.saveAsync(this.state);
    log.info(
      {
        startBlock: start,
        deployments: Object.fromEntries(deployments.map((d) => [d.address, d.block])),
      },
      'startBlock auto: reading from the earliest deployment block of the watched contracts',
    );
  }

  /** Block 0's hash must be the checkpoint's: the same RPC URL may now serve another chain (a new devnet). */
  private async checkGenesis(): Promise<void> {
    const chain = this.deps.contracts.chain;
    let g: BlockHeader;
    try {
      [g] = await this.deps.reader.headers(0, 0);
    } catch (e) {
      // A node that answers but has no block 0 (pruned history): follow on unchecked rather than never.
      if (!isFault(e, 'RPC_ERROR')) throw e;
      this.deps.log.warn(
        { err: (e as Error).message },
        'no genesis header from the node: chain identity not checked',
      );
      this.genesisChecked = true;
      return;
    }
    if (this.state.genesis === undefined) {
      this.state.genesis = g.hash;
      // Written while the first range is read; `published` waits for it before any publish.
      this.genesisSaving = this.deps.checkpoint.saveAsync(this.state);
      this.genesisSaving.catch(() => {});
    } else if (this.state.genesis !== g.hash)
      throw new ChainStopped(
        `chain ${chain.name} (${chain.chainId}) is not the chain its checkpoint was written for: ` +
          `expected genesis hash ${this.state.genesis}, the RPC URL serves genesis ${g.hash}. ` +
          `Point rpcUrls back at that chain, or start this chain over: delete ${this.deps.checkpoint.path} ` +
          'and the data stored from it (the data directory, for the embedded store)',
        'GENESIS_MISMATCH',
      );
    this.genesisChecked = true;
  }

  /** One step: a reorg check, or the next range up to the head. */
  async round(): Promise<RoundResult> {
    await this.refreshHead();
    if (this.state.next > this.head) return this.checkTip();
    const from = this.state.next;
    const { logs, to, headers, closes: closing } = await this.ranges.take(from, this.head);
    // The tip's last block is `from - 1` (the previous range's last, or the ancestor after a reorg).
    const last = this.state.tip.at(-1);
    if (last && headers[0].parentHash !== last.hash) {
      await this.published();
      return { blocks: 0, events: 0, retracted: await this.unwind() };
    }
    // The chain moved while the range was read: read it afresh rather than publish a mix of forks.
    if (movedDuringRead(headers, logs)) {
      this.ranges.drop();
      return { blocks: 0, events: 0, retracted: 0 };
    }
    // Backfilling: the next range is read while this one is processed (checked like this one when taken).
    if (to < this.head) this.ranges.readAhead(to + 1, this.head);
    // The day closes' reads go on while the logs are decoded and mapped (if this round fails
    // first, a failure of theirs is not left unhandled), with the periodic snapshot's when due.
    const now = this.deps.clock();
    const due = now - this.state.lastSnapshotAt >= this.deps.snapshotIntervalSeconds * 1000;
    const closesRead = dayCloseSnapshots(this.deps, last, headers, closing, due ? headers.at(-1) : undefined);
    closesRead.catch(() => {});
    const caches = { unpublished: this.unpublished, decimals: this.decimals, baseOf: this.baseOf };
    const mapped = await mapRange(this.deps, caches, this.state, { logs, to, headers });
    const closes = await closesRead;
    const { chainId } = this.deps.contracts.chain;
    // blocks_raw stores the headers read, not the blocks known from their logs only; the headers
    // go last (the chain's watermark moves on once the range's records are in).
    const records = [
      ...mapped.events,
      ...closes,
      ...headers.filter(isHeader).map((h) => blockEmitted(chainId, h)),
    ];
    await this.publishRange(to, records, headers, closes, mapped, due ? now : undefined);
    return { blocks: to - from + 1, events: mapped.events.length, retracted: 0 };
  }

  /** The head (and, on the first round, the genesis and the start block) as this round sees them. */
  private async refreshHead(): Promise<void> {
    const { reader } = this.deps;
    const { confirmations, reorgWindow } = this.deps.contracts.chain;
    // Backfilling deeper than the reorg window, the head asked within HEAD_EVERY_MS is enough: one
    // call and round trip fewer per range (the head only grows; the range read ahead used it too).
    const deep = this.state.next <= this.head - reorgWindow;
    if (!deep || performance.now() - this.headAt >= HEAD_EVERY_MS) {
      // The first round asks for the genesis header and the head at once.
      [this.chainHead] = await Promise.all([reader.head(), this.genesisChecked || this.checkGenesis()]);
      this.headAt = performance.now();
    } else if (!this.genesisChecked) await this.checkGenesis();
    this.head = Math.max(-1, this.chainHead - confirmations);
    if (this.state.startBlock === undefined) await this.findStart();
  }

  /** Caught up: a reorg of the tip is retracted, else the periodic snapshot is taken when due. */
  private async checkTip(): Promise<RoundResult> {
    await this.published();
    const last = this.state.tip.at(-1);
    if (
      last &&
      (last.number > this.chainHead ||
        (await this.deps.reader.headersAt([last.number]))[0].hash !== last.hash)
    )
      return { blocks: 0, events: 0, retracted: await this.unwind() };
    const before = this.state.lastSnapshotAt;
    await this.maybeSnapshot();
    if (this.state.lastSnapshotAt !== before) await this.deps.checkpoint.saveAsync(this.state);
    return { blocks: 0, events: 0, retracted: 0 };
  }

  /**
   * Publishes a range's records and moves the state past it. Deep below the window (never
   * retracted) and not the last range, the publish goes on while the next range is processed;
   * else the round waits, so a caught-up chain has all of it on the bus.
   */
  private async publishRange(
    to: number,
    records: Emitted[],
    headers: BlockStamp[],
    closes: Emitted[],
    mapped: MappedRange,
    snapshotAt: number | undefined,
  ): Promise<void> {
    const { reorgWindow } = this.deps.contracts.chain;
    // Encoded while the previous range's publish may still be going on: only the writes wait for it.
    const send = await this.deps.publish.prepare?.(records);
    // One publish at a time, in range order (a range's headers never before its or earlier records).
    await this.published();
    const overlap = to < this.head - reorgWindow;
    const before = copyState(this.state);
    const publishing = send ? send() : this.deps.publish(records);
    this.state.tip = extendTip(this.state.tip, headers, mapped.events, reorgWindow);
    keepRates(this.state.tip, closes);
    this.state.owed = mapped.owed;
    this.state.depositFees = mapped.feeMarks;
    this.state.next = to + 1;
    if (snapshotAt !== undefined) this.state.lastSnapshotAt = snapshotAt;
    if (!overlap) {
      // The checkpoint's write (and fsync) goes on while the range is published; it replaces the
      // checkpoint once the publish is durable (saveAfter). A failed publish leaves both as they were.
      const saved = this.checkpointDue(to) && this.deps.checkpoint.saveAfter(this.state, publishing);
      await publishing.catch((e: unknown) => {
        if (saved) saved.catch(() => {});
        this.state = before;
        this.unsaved = true;
        throw e;
      });
      await saved;
      this.durableNext = to + 1;
      return;
    }
    const snapshot = this.checkpointDue(to) ? copyState(this.state) : undefined;
    const done = publishing.then(
      () => {
        // The checkpoint of this range, only once it is durable (and queued before any later write).
        if (snapshot) this.saveDeep(snapshot);
        this.durableNext = to + 1;
        return {};
      },
      (error: unknown) => ({ error }),
    );
    this.inflight = { done, before };
  }

  /**
   * Waits until everything published so far is durable: the genesis checkpoint, a range's publish
   * in flight. If that failed, the state goes back to before its range (nothing after it was
   * published: each publish waits for the one before); the failure is the round's (retried).
   */
  private async published(): Promise<void> {
    const genesis = this.genesisSaving;
    this.genesisSaving = undefined;
    // A failed write: checked and saved again by the next round, before anything is published.
    await genesis?.catch((e: unknown) => {
      this.state.genesis = undefined;
      this.genesisChecked = false;
      throw e;
    });
    const inflight = this.inflight;
    if (!inflight) return;
    const { error } = await inflight.done;
    this.inflight = undefined;
    if (!error) return;
    this.state = inflight.before;
    this.unsaved = true;
    this.ranges.drop();
    throw error;
  }

  /**
   * Whether the state after a range up to `to` is to be checkpointed now; if not, it is marked
   * unsaved. A range within the reorg window always is (before the round ends, as every reorg
   * retraction needs). A range deeper than the window below the head cannot be retracted anyway
   * (a reorg that deep stops the chain), so while backfilling such ranges the checkpoint is
   * written at most every `CHECKPOINT_EVERY_MS` (each write serialises the whole tip and waits
   * for fsync), once the range is durable on the bus, and the round does not wait for the write
   * (`saveDeep`; writes land in order: `saveAsync`). A crash before it lands re-publishes
   * identical records, which the consumers drop; a failed write is done again with the next
   * range, or by `settle`.
   */
  private checkpointDue(to: number): boolean {
    const deep = to < this.head - this.deps.contracts.chain.reorgWindow;
    if (deep && performance.now() - this.savedAt < CHECKPOINT_EVERY_MS) {
      this.unsaved = true;
      return false;
    }
    this.savedAt = performance.now();
    this.unsaved = false;
    return true;
  }

  /** Writes a deep range's checkpoint without waiting for it; a failed write is done again later. */
  private saveDeep(state: ChainCheckpoint): void {
    const write = this.deps.checkpoint.saveAsync(state);
    this.saving = write.catch((e: unknown) => {
      this.unsaved = true;
      this.savedAt = Number.NEGATIVE_INFINITY;
      this.deps.log.warn({ err: errorMessage(e) }, 'checkpoint write failed; retried after the next range');
    });
  }

  /** Once stopped: waits for a range still being read ahead and a checkpoint write, and saves a checkpoint left unsaved. */
  async settle(): Promise<void> {
    await this.ranges.settle();
    // A failed publish puts the state back to what is on the bus, which is saved below.
    await this.published().catch(() => {});
    await this.saving;
    if (this.unsaved) {
      await this.deps.checkpoint.saveAsync(this.state);
      this.unsaved = false;
    }
  }

  /**
   * Retracts the tip blocks that are no longer canonical, down to the true common
   * ancestor (the newest tip block whose hash is still the chain's); returns how many.
   * Throws `ChainStopped` when not even the oldest tip block is canonical any more.
   */
  private async unwind(): Promise<number> {
    const keep = await keptBlocks(
      this.deps.reader,
      this.deps.contracts.chain,
      this.state.tip,
      this.chainHead,
      this.state.startBlock ?? 0,
    );
    if (keep === this.state.tip.length) return 0; // the chain moved, but every kept block is canonical
    this.ranges.drop();
    return retractOrphans(this.state, keep, this.deps);
  }

  /** The periodic snapshot, when due, at the newest block ingested (caught up: no range to publish it with). */
  private async maybeSnapshot(): Promise<void> {
    const now = this.deps.clock();
    const block = this.state.tip.at(-1);
    if (now - this.state.lastSnapshotAt < this.deps.snapshotIntervalSeconds * 1000 || !block) return;
    this.state.lastSnapshotAt = now;
    await this.published();
    try {
      const records = await takeSnapshot(this.deps.reader, this.deps.contracts, block);
      await this.deps.publish(records);
      keepRates(this.state.tip, records);
    } catch (e) {
      this.deps.onSnapshotError(e);
    }
  }
}
