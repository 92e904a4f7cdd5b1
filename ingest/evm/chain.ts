/**
 * Chain reads of the EVM ingester over `EvmRpc`: the head, block headers in batches,
 * logs of a block range (the range adapted to every answer: `RangeSizer`), and contract reads through Multicall3's
 * `aggregate3` with a fallback to a batch of `eth_call`s where no Multicall3 is
 * deployed.
 */
import { decodeFunctionResult, encodeFunctionData, type Hex, numberToHex } from 'viem';
import { multicall3Abi } from './abis.ts';
import type { RawLog } from './decode.ts';
import { type EvmRpc, isFault, type RangeHint, rangeHint, rpcFailure } from './rpc.ts';

/**
 * A block's identity and time: from its header, or from its logs where the provider puts the
 * block's timestamp on them (then no parent hash: range-headers.ts).
 */
export interface BlockStamp {
  number: number;
  hash: Hex;
  parentHash?: Hex;
  timestamp: number;
}

/** A block header as read (eth_getBlockByNumber). */
export interface BlockHeader extends BlockStamp {
  parentHash: Hex;
}

/** Whether `b`'s header was read (it has its parent hash), not only known from its logs. */
export const isHeader = (b: BlockStamp): b is BlockHeader => b.parentHash !== undefined;

/** One contract read: `data` is the ABI-encoded call. */
export interface ReadCall {
  target: Hex;
  data: Hex;
}

const hex = (n: number) => numberToHex(n);
/** A block as eth_getBlockByNumber(n, false) answers it, the fields read. */
interface RawHeader {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
  /** Its transactions' hashes. */
  transactions?: unknown[];
  transactionsRoot?: Hex;
}

/** The root of an empty transaction list (as is `0x00…00` on some chains). */
const EMPTY_TRANSACTIONS_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

/**
 * Whether the node dropped the block's transactions: it lists none under a root of some. anvil
 * does so past `--transaction-block-keeper` (the devnet's `devnet.liveTransactionBlocks`), and
 * eth_getLogs then answers nothing for that block, without an error: the range is refused
 * rather than read as empty.
 */
function transactionsDropped(b: RawHeader): boolean {
  const root = b.transactionsRoot;
  return b.transactions?.length === 0 && !!root && root !== EMPTY_TRANSACTIONS_ROOT && !/^0x0*$/.test(root);
}
/** Logs one eth_getLogs answer should hold at most: bounds the memory of a range in flight. */
export const TARGET_LOGS = 10_000;
/** The first range asked for (at most `maxBlockRange`): a dense chain is not read 2,000 blocks at once. */
export const FIRST_RANGE = 100;
/** An answer quicker than this (with few logs) lets the range grow. */
const FAST_MS = 2_000;
/** Most a fast answer with few logs lets the range grow at once (an empty one: this factor). */
const MAX_GROWTH = 16;

/**
 * The eth_getLogs block range in force, adapted to every answer: it starts at
 * `FIRST_RANGE` blocks (at most `max`), grows while answers are small (at most half of
 * `targetLogs` logs) and fast (by the room the answer left, 2 to `MAX_GROWTH` times: a sparse
 * chain is soon read in wide ranges), shrinks in proportion when an answer holds more than
 * `targetLogs` logs. When the provider refuses a range, the range its error suggests is taken
 * (`RangeHint`: a provider's block-span limit becomes the ceiling; a too-many-logs refusal
 * sizes this range only); without a suggestion the range halves, and a refused width is never
 * asked for again (until a restart). Never above `max` (`maxBlockRange`).
 */
export class RangeSizer {
  size: number;
  /** The largest range not refused so far. */
  private ceiling: number;
  constructor(
    readonly max: number,
    private readonly targetLogs = TARGET_LOGS,
  ) {
    this.size = Math.min(max, FIRST_RANGE);
    this.ceiling = max;
  }
  /**
   * A refused range of `refused` blocks: the suggested width when the refusal names one
   * (`hint`), else half. False when nothing narrower is left (one block: a real error).
   */
  shrink(refused: number, hint?: RangeHint): boolean {
    if (refused <= 1) return false;
    if (hint?.span && hint.span < refused) this.ceiling = Math.min(this.ceiling, hint.span);
    const suggested = hint?.to !== undefined ? hint.to + 1 : undefined;
    if (suggested !== undefined && suggested < refused && suggested >= 1) {
      if (!hint?.countLimited) this.ceiling = Math.min(this.ceiling, suggested);
      this.size = suggested;
      return true;
    }
    if (hint?.span && hint.span < refused) {
      this.size = hint.span;
      return true;
    }
    this.ceiling = Math.min(this.ceiling, refused - 1);
    this.size = Math.max(1, Math.floor(Math.min(this.size, refused) / 2));
    return true;
  }
  /** An answer of `logs` logs for `span` blocks, in `ms`. */
  succeeded(span: number, logs = 0, ms = 0): void {
    if (logs > this.targetLogs) this.size = Math.max(1, Math.floor((span * this.targetLogs) / logs));
    else if (2 * logs <= this.targetLogs && ms <= FAST_MS && span >= this.size) {
      const room = Math.floor(this.targetLogs / (2 * Math.max(1, logs)));
      this.size = Math.min(this.ceiling, this.size * Math.max(2, Math.min(MAX_GROWTH, room)));
    }
  }
}

export interface ChainReaderOptions {
  rpc: EvmRpc;
  addresses: Hex[];
  topics: Hex[];
  maxBlockRange: number;
  headerBatchSize: number;
  multicall3: Hex;
}

export class ChainReader {
  readonly sizer: RangeSizer;
  private multicallKnown: boolean | undefined;
  /** The Multicall3 calldata of the last `read` of a frozen calls array (a snapshot reads the same one at every day close). */
  private lastRead: { calls: readonly ReadCall[]; data: Hex } | undefined;

  constructor(private readonly opts: ChainReaderOptions) {
    this.sizer = new RangeSizer(opts.maxBlockRange);
  }

  async head(): Promise<number> {
    return Number(await this.opts.rpc.call<Hex>('eth_blockNumber', []));
  }

  /** Headers of blocks `from..to`, in order; throws when the node lacks one or dropped its transactions. */
  headers(from: number, to: number): Promise<BlockHeader[]> {
    const numbers: number[] = [];
    for (let n = from; n <= to; n++) numbers.push(n);
    return this.headersAt(numbers);
  }

  /**
   * Headers of the blocks `numbers`, in that order, `headerBatchSize` to a batch, the batches
   * sent at once (the chain's `maxConcurrentRequests` bounds them); throws when the node lacks one
   * or dropped its transactions (`transactionsDropped`: each range reads its first and last block's).
   */
  async headersAt(numbers: number[]): Promise<BlockHeader[]> {
    const parts: number[][] = [];
    for (let start = 0; start < numbers.length; start += this.opts.headerBatchSize)
      parts.push(numbers.slice(start, start + this.opts.headerBatchSize));
    const answers = await Promise.all(
      parts.map((part) =>
        this.opts.rpc.batch<RawHeader | null>(
          part.map((n) => ({ method: 'eth_getBlockByNumber', params: [hex(n), false] })),
        ),
      ),
    );
    const out: BlockHeader[] = [];
    answers.forEach((blocks, p) => {
      blocks.forEach((b, k) => {
        if (!b) throw rpcFailure('eth_getBlockByNumber', `block ${parts[p][k]} is not available yet`);
        if (transactionsDropped(b))
          throw rpcFailure(
            'eth_getBlockByNumber',
            `block ${parts[p][k]}: the node no longer holds its transactions, nor its logs (anvil keeps those of the last --transaction-block-keeper blocks only: the devnet's devnet.liveTransactionBlocks)`,
          );
        out.push({
          number: Number(b.number),
          hash: b.hash,
          parentHash: b.parentHash,
          timestamp: Number(b.timestamp),
        });
      });
    });
    return out;
  }

  /**
   * Logs of the watched contracts from `from` up to at most `to`, asking for no more
   * than the current range; returns the last block covered (the range may have shrunk).
   */
  async logs(from: number, to: number): Promise<{ logs: RawLog[]; to: number }> {
    for (;;) {
      const end = Math.min(to, from + this.sizer.size - 1);
      const started = performance.now();
      try {
        const raw = await this.opts.rpc.call<RawJsonLog[]>('eth_getLogs', [
          {
            fromBlock: hex(from),
            toBlock: hex(end),
            address: this.opts.addresses,
            topics: [this.opts.topics],
          },
        ]);
        this.sizer.succeeded(end - from + 1, raw.length, performance.now() - started);
        const logs = new Array<RawLog>(raw.length);
        for (let k = 0; k < raw.length; k++) logs[k] = parseLog(raw[k]);
        return { logs, to: end };
      } catch (e) {
        if (!isFault(e, 'RANGE_TOO_LARGE')) throw e;
        // The hint's `to` is absolute: as a width from `from` for the sizer.
        const hint = rangeHint(e, from);
        const relative = hint && { ...hint, to: hint.to === undefined ? undefined : hint.to - from };
        if (!this.sizer.shrink(end - from + 1, relative)) throw e;
      }
    }
  }

  /** Whether `address` holds code at `block` (eth_getCode). */
  async hasCode(address: Hex, block: number): Promise<boolean> {
    const code = await this.opts.rpc.call<Hex>('eth_getCode', [address, hex(block)]);
    return code !== '0x' && code !== '0x0';
  }

  /** Return data of each read at `block` (undefined where the call reverted or found no code). */
  async read(calls: readonly ReadCall[], block: number): Promise<(Hex | undefined)[]> {
    if (!calls.length) return [];
    if (this.multicallKnown !== false) {
      const answer = await this.opts.rpc.call<Hex>('eth_call', [
        { to: this.opts.multicall3, data: this.aggregate(calls) },
        hex(block),
      ]);
      if (answer !== '0x') {
        this.multicallKnown = true;
        return aggregateResults(answer);
      }
      // No code at the Multicall3 address on this chain (an empty answer): read one by one from now on.
      this.multicallKnown = false;
    }
    return this.readEach(calls, block);
  }

  /**
   * The same reads at each of `blocks` (a snapshot at every day close of a range), one promise
   * per block, as `read` answers it. Once Multicall3 is known to answer on the chain, they go as
   * JSON-RPC batches (`headerBatchSize` to a batch): one round trip, and one of the chain's
   * concurrent requests, for every day of a range rather than one each (one by one, a long
   * backfill's snapshots add a round trip a day: bench/sparse-backfill.ts). Until Multicall3 has
   * answered on the chain, the first block is
   * read alone, and the rest once it has. A block whose batch failed, or answered no code, is
   * read alone: its failure stays its own.
   */
  readAt(calls: readonly ReadCall[], blocks: readonly number[]): Promise<(Hex | undefined)[]>[] {
    if (!calls.length || blocks.length < 2 || this.multicallKnown === false)
      return blocks.map((b) => this.read(calls, b));
    if (this.multicallKnown === undefined) {
      const first = this.read(calls, blocks[0]);
      const rest = first.catch(() => {}).then(() => this.readAt(calls, blocks.slice(1)));
      return [first, ...blocks.slice(1).map((_, k) => rest.then((r) => r[k]))];
    }
    const data = this.aggregate(calls);
    const out: Promise<(Hex | undefined)[]>[] = [];
    for (let start = 0; start < blocks.length; start += this.opts.headerBatchSize) {
      const part = blocks.slice(start, start + this.opts.headerBatchSize);
      const answers = this.opts.rpc.batch<Hex>(
        part.map((b) => ({ method: 'eth_call', params: [{ to: this.opts.multicall3, data }, hex(b)] })),
      );
      part.forEach((b, k) => {
        out.push(
          answers.then(
            (list) => (list[k] === '0x' ? this.read(calls, b) : aggregateResults(list[k])),
            () => this.read(calls, b),
          ),
        );
      });
    }
    return out;
  }

  /** The Multicall3 `aggregate3` calldata of `calls` (kept for a frozen array: a snapshot reads the same one each time). */
  private aggregate(calls: readonly ReadCall[]): Hex {
    if (this.lastRead?.calls === calls) return this.lastRead.data;
    const data = encodeFunctionData({
      abi: multicall3Abi,
      functionName: 'aggregate3',
      args: [calls.map((c) => ({ target: c.target, allowFailure: true, callData: c.data }))],
    });
    if (Object.isFrozen(calls)) this.lastRead = { calls, data };
    return data;
  }

  private async readEach(calls: readonly ReadCall[], block: number): Promise<(Hex | undefined)[]> {
    const out: (Hex | undefined)[] = [];
    for (const c of calls) {
      try {
        const data = await this.opts.rpc.call<Hex>('eth_call', [{ to: c.target, data: c.data }, hex(block)]);
        out.push(data === '0x' ? undefined : data);
      } catch (e) {
        if (isFault(e, 'RPC_ERROR')) out.push(undefined);
        else throw e;
      }
    }
    return out;
  }
}

/** Each read's return data in an `aggregate3` answer (undefined where it reverted or found no code). */
function aggregateResults(answer: Hex): (Hex | undefined)[] {
  const results = decodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', data: answer });
  return results.map((r) => (r.success && r.returnData !== '0x' ? r.returnData : undefined));
}

interface RawJsonLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  transactionHash: Hex;
  transactionIndex: Hex;
  logIndex: Hex;
  /** The block's timestamp: recent geth, reth and anvil put it on every log. */
  blockTimestamp?: Hex;
}

function parseLog(l: RawJsonLog): RawLog {
  const log = {
    address: l.address,
    topics: l.topics,
    data: l.data,
    blockNumber: Number(l.blockNumber),
    blockHash: l.blockHash,
    transactionHash: l.transactionHash,
    transactionIndex: Number(l.transactionIndex),
    logIndex: Number(l.logIndex),
    blockTimestamp: l.blockTimestamp === undefined ? undefined : Number(l.blockTimestamp),
  };
  return log;
}
