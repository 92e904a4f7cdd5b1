/**
 * Follows one EVM chain: block ranges from the checkpoint up to `confirmations` blocks below
 * the head, each as logs + the headers it needs (`range-headers.ts`) -> decoded events ->
 * records, published, then checkpointed (`<dataDir>/ingest/evm-<chainId>.json`, replaced
 * atomically). The ingested blocks whose headers were read within `reorgWindow` of the newest
 * stay in the checkpoint's `tip` with their hashes and the records published for them (every
 * block of the window below the head is read; deeper, only the blocks the range needed). A
 * range whose first parent hash is not the tip's last hash, or a tip block no longer
 * canonical, is a reorg: the tip's hashes are
 * compared with the chain's canonical ones to find the true common ancestor (the
 * newest tip block still canonical), every record and header published above it is
 * published again with `removed: true` (newest first), and ingestion resumes at the
 * ancestor + 1, reading the canonical branch. A reorg below the whole window cannot
 * be retracted exactly: the follower stops (`ChainStopped`) rather than leave wrong
 * balances. The chain's genesis hash is kept too: a checkpoint never resumes on
 * another chain. A crash between publishing and checkpointing re-publishes the same
 * records on restart (identical events, which the consumers drop); nothing is skipped.
 * The reorg window and its retraction are in `reorg.ts`, the range reads (and the read-ahead
 * while backfilling) in `read-ahead.ts`.
 */
import { decodeFunctionResult, encodeFunctionData, type Hex } from 'viem';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { CheckpointFile } from '../checkpoint.ts';
import { erc20Views } from './abis.ts';
import { accrue } from './accrual.ts';
import { type BlockHeader, type BlockStamp, type ChainReader, isHeader } from './chain.ts';
import type { ChainContracts } from './contracts.ts';
import { type DecodedLog, decodeLog, type RawLog } from './decode.ts';
import { autoStartBlock } from './deployment.ts';
import { depositFees } from './deposit-fees.ts';
import { type Emitted, mapLogs } from './map.ts';
import { blockEmitted, type PublishEmitted } from './publish.ts';
import { RangeReader } from './read-ahead.ts';
import { type ChainCheckpoint, ChainStopped, extendTip, keptBlocks, retractOrphans } from './reorg.ts';
import { isFault } from './rpc.ts';
import { takeSnapshot } from './snapshots.ts';

export { type ChainCheckpoint, ChainStopped, type TipBlock } from './reorg.ts';

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

const DAY = 86_400;
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
  /** The range reads, with the one read ahead while backfilling. */
  private readonly ranges: RangeReader;
  /** When the checkpoint was last saved (performance.now()), and whether the state moved on since. */
  private savedAt = Number.NEGATIVE_INFINITY;
  private unsaved = false;
  /** A checkpoint write the round did not wait for (deep below the window; its failure handled). */
  private saving: Promise<void> | undefined;

  constructor(private readonly deps: FollowerOptions) {
    const chain = deps.contracts.chain;
    this.ranges = new RangeReader(deps.reader, chain.reorgWindow);
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
  }

  /** The next block to ingest. */
  get next(): number {
    return this.state.next;
  }

  /** The block this process started ingesting at (the first block `startBlock: auto` found, on a first start). */
  resumedAt: number;

  /** `startBlock: auto` on a first start: the earliest deployment block of the watched contracts. */
  private async findStart(): Promise<void> {
    const { contracts, reader, log } = this.deps;
    const { start, deployments } = await autoStartBlock(reader, contracts.addresses, this.chainHead);
    this.state.startBlock = start;
    this.state.next = start;
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
      await this.deps.checkpoint.saveAsync(this.state);
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
    const { reader } = this.deps;
    if (!this.genesisChecked) await this.checkGenesis();
    const { confirmations, reorgWindow } = this.deps.contracts.chain;
    // Backfilling deeper than the reorg window, the head asked within HEAD_EVERY_MS is enough: one
    // call and round trip fewer per range (the head only grows; the range read ahead used it too).
    const deep = this.state.next <= this.head - reorgWindow;
    if (!deep || performance.now() - this.headAt >= HEAD_EVERY_MS) {
      this.chainHead = await reader.head();
      this.headAt = performance.now();
    }
    this.head = Math.max(-1, this.chainHead - confirmations);
    if (this.state.startBlock === undefined) await this.findStart();
    const last = this.state.tip.at(-1);
    if (this.state.next > this.head) {
      if (
        last &&
        (last.number > this.chainHead || (await reader.headersAt([last.number]))[0].hash !== last.hash)
      )
        return { blocks: 0, events: 0, retracted: await this.unwind() };
      const before = this.state.lastSnapshotAt;
      await this.maybeSnapshot(undefined);
      if (this.state.lastSnapshotAt !== before) await this.deps.checkpoint.saveAsync(this.state);
      return { blocks: 0, events: 0, retracted: 0 };
    }
    const from = this.state.next;
    const { logs, to, headers } = await this.ranges.take(from, this.head);
    // The tip's last block is `from - 1` (the previous range's last, or the ancestor after a reorg).
    if (last && headers[0].parentHash !== last.hash)
      return { blocks: 0, events: 0, retracted: await this.unwind() };
    const hashOf = new Map(headers.map((h) => [h.number, h.hash]));
    // Consecutive headers read must chain (a block known from its logs has no parent hash to check).
    const moved =
      headers.some(
        (h, k) =>
          k > 0 &&
          h.parentHash !== undefined &&
          h.number === headers[k - 1].number + 1 &&
          h.parentHash !== headers[k - 1].hash,
      ) || logs.some((l) => hashOf.get(l.blockNumber) !== l.blockHash);
    // The chain moved while the range was read: read it again rather than publish a mix of forks.
    if (moved) return { blocks: 0, events: 0, retracted: 0 };
    // Backfilling: the next range is read while this one is processed (checked like this one when taken).
    if (to < this.head) this.ranges.readAhead(to + 1, this.head);
    // The day closes' reads go on while the logs are decoded and mapped (if this round fails
    // first, a failure of theirs is not left unhandled).
    const closesRead = this.daySnapshots(last, headers);
    closesRead.catch(() => {});
    const decoded = this.decode(logs);
    await this.readDecimals(decoded, to);
    const timeOf = new Map(headers.map((h) => [h.number, h.timestamp]));
    const ctx = { contracts: this.deps.contracts, blockTime: (n: number) => timeOf.get(n) as number };
    // On a copy: if publishing fails, the retried range must see the marks as they were.
    const owed = structuredClone(this.state.owed);
    const accrual = await accrue(reader, ctx, decoded, owed, this.baseOf);
    const feeMarks = structuredClone(this.state.depositFees ?? {});
    const fees = await depositFees(reader, decoded, feeMarks);
    const mapped = mapLogs(
      {
        ...ctx,
        decimals: this.decimals,
        pausedAfter: (a, n) => accrual.paused.get(`${a}:${n}`) ?? false,
        depositFee: (d) => fees.get(d),
      },
      decoded,
    );
    for (const [k, n] of mapped.unpublished) this.unpublished.set(k, (this.unpublished.get(k) ?? 0) + n);
    const events = [...mapped.emitted, ...accrual.fees].sort(
      (a, b) => (a.record.blockNumber as number) - (b.record.blockNumber as number),
    );
    const chainId = this.deps.contracts.chain.chainId;
    const closes = await closesRead;
    // blocks_raw stores the headers read, not the blocks known from their logs only; the headers
    // go last (the chain's watermark moves on once the range's records are in).
    const read = headers.filter(isHeader);
    await this.deps.publish([...events, ...closes, ...read.map((h) => blockEmitted(chainId, h))]);
    this.state.tip = extendTip(this.state.tip, headers, events, this.deps.contracts.chain.reorgWindow);
    this.keepRates(closes);
    this.state.owed = owed;
    this.state.depositFees = feeMarks;
    this.state.next = to + 1;
    await this.maybeSnapshot(headers.at(-1));
    await this.checkpointAfter(to);
    return { blocks: to - from + 1, events: events.length, retracted: 0 };
  }

  /**
   * Saves the checkpoint after a range up to `to` was published (durably: `publish` resolved).
   * A range deeper than the reorg window below the head cannot be retracted anyway (a reorg
   * that deep stops the chain), so while backfilling such ranges the checkpoint is written at
   * most every `CHECKPOINT_EVERY_MS` (each write serialises the whole tip and waits for fsync),
   * and the round does not wait for the write: the next range is processed meanwhile (writes
   * land in order: `saveAsync`). A crash before it lands re-publishes identical records, which
   * the consumers drop; a failed write is done again with the next range, or by `settle`. A
   * range within the window is checkpointed before the round ends, as every reorg retraction
   * needs.
   */
  private async checkpointAfter(to: number): Promise<void> {
    const deep = to < this.head - this.deps.contracts.chain.reorgWindow;
    const now = performance.now();
    if (deep && now - this.savedAt < CHECKPOINT_EVERY_MS) {
      this.unsaved = true;
      return;
    }
    this.savedAt = now;
    this.unsaved = false;
    const write = this.deps.checkpoint.saveAsync(this.state);
    if (!deep) return write;
    this.saving = write.catch((e: unknown) => {
      this.unsaved = true;
      this.savedAt = Number.NEGATIVE_INFINITY;
      this.deps.log.warn(
        { err: errorMessage(e) },
        'checkpoint write failed; written again after the next range',
      );
    });
  }

  /** Once stopped: waits for a range still being read ahead and a checkpoint write, and saves a checkpoint left unsaved. */
  async settle(): Promise<void> {
    await this.ranges.settle();
    await this.saving;
    if (this.unsaved) {
      await this.deps.checkpoint.saveAsync(this.state);
      this.unsaved = false;
    }
  }

  private decode(logs: RawLog[]): DecodedLog[] {
    const out: DecodedLog[] = [];
    for (const log of logs) {
      const c = this.deps.contracts.byAddress.get(log.address.toLowerCase());
      const d = c && decodeLog(c.role, log);
      if (d) out.push(d);
      else this.unpublished.set('undecodable', (this.unpublished.get('undecodable') ?? 0) + 1);
    }
    return out.sort((a, b) => a.log.blockNumber - b.log.blockNumber || a.log.logIndex - b.log.logIndex);
  }

  /** On-chain `decimals()` of tokens in the events that the registry does not describe. */
  private async readDecimals(decoded: DecodedLog[], block: number): Promise<void> {
    const tokens = new Set<string>();
    for (const d of decoded)
      for (const key of ['asset', 'depositAsset', 'feeAsset', 'wantToken'])
        if (typeof d.args[key] === 'string') tokens.add(d.args[key] as string);
    const unknown = [...tokens].filter(
      (t) => !this.decimals.has(t) && !/^0x0{40}$/.test(t) && !this.deps.contracts.byShare.has(t),
    );
    if (!unknown.length) return;
    const data = encodeFunctionData({ abi: erc20Views, functionName: 'decimals' });
    const answers = await this.deps.reader.read(
      unknown.map((t) => ({ target: t as Hex, data })),
      block,
    );
    unknown.forEach((t, k) => {
      const a = answers[k];
      if (a)
        this.decimals.set(t, decodeFunctionResult({ abi: erc20Views, functionName: 'decimals', data: a }));
    });
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
    // The chain moved between two reads but every kept block is still canonical: read on.
    if (keep === this.state.tip.length) return 0;
    this.ranges.drop();
    return retractOrphans(this.state, keep, this.deps);
  }

  /**
   * The snapshots at the last block of every UTC day that ended inside the range (the day's
   * close; `headers` holds each such block: range-headers.ts), read at once and published with
   * the range's records. A failed read is told (`onSnapshotError`) and the range goes on.
   */
  private async daySnapshots(previous: BlockStamp | undefined, headers: BlockStamp[]): Promise<Emitted[]> {
    const closes: BlockStamp[] = [];
    let prev = previous;
    for (const h of headers) {
      if (prev && Math.floor(prev.timestamp / DAY) < Math.floor(h.timestamp / DAY)) closes.push(prev);
      prev = h;
    }
    const { reader, contracts } = this.deps;
    const taken = await Promise.all(
      closes.map((c) =>
        takeSnapshot(reader, contracts, c).catch((e: unknown) => {
          this.deps.onSnapshotError(e);
          return [];
        }),
      ),
    );
    return taken.flat();
  }

  /** READ rates carry their block's identity: kept with the block in the tip so a reorg retracts them too. */
  private keepRates(records: Emitted[]): void {
    for (const r of records) {
      if (r.family !== 'rates') continue;
      const tipBlock = this.state.tip.find((b) => b.hash === r.record.blockHash);
      tipBlock?.events.push(r);
    }
  }

  private async maybeSnapshot(at: BlockStamp | undefined): Promise<void> {
    const now = this.deps.clock();
    if (now - this.state.lastSnapshotAt < this.deps.snapshotIntervalSeconds * 1000) return;
    const block = at ?? this.state.tip.at(-1);
    if (!block) return;
    this.state.lastSnapshotAt = now;
    await this.snapshot(block);
  }

  private async snapshot(at: BlockStamp): Promise<void> {
    try {
      const records = await takeSnapshot(this.deps.reader, this.deps.contracts, at);
      await this.deps.publish(records);
      this.keepRates(records);
    } catch (e) {
      this.deps.onSnapshotError(e);
    }
  }
}
