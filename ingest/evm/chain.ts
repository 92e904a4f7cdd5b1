/**
 * Chain reads of the EVM ingester over `EvmRpc`: the head, block headers in batches,
 * logs of a block range (shrinking the range when the provider refuses it, growing
 * it back after a run of successes), and contract reads through Multicall3's
 * `aggregate3` with a fallback to a batch of `eth_call`s where no Multicall3 is
 * deployed.
 */
import { decodeFunctionResult, encodeFunctionData, type Hex, numberToHex } from 'viem';
import { multicall3Abi } from './abis.ts';
import type { RawLog } from './decode.ts';
import { type EvmRpc, RpcFault } from './rpc.ts';

export interface BlockHeader {
  number: number;
  hash: Hex;
  parentHash: Hex;
  timestamp: number;
}

/** One contract read: `data` is the ABI-encoded call. */
export interface ReadCall {
  target: Hex;
  data: Hex;
}

const hex = (n: number) => numberToHex(n);
/** Successes in a row after which a shrunk log range is doubled again. */
const GROW_AFTER = 8;

/** The eth_getLogs block range in force: halved on refusals, grown back slowly. */
export class RangeSizer {
  size: number;
  private streak = 0;
  constructor(readonly max: number) {
    this.size = max;
  }
  /** Halves the refused range; false when it was one block (the refusal is then a real error). */
  shrink(refused: number): boolean {
    this.streak = 0;
    if (refused <= 1) return false;
    this.size = Math.max(1, Math.floor(Math.min(this.size, refused) / 2));
    return true;
  }
  succeeded(): void {
    if (this.size >= this.max || ++this.streak < GROW_AFTER) return;
    this.size = Math.min(this.max, this.size * 2);
    this.streak = 0;
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

  constructor(private readonly opts: ChainReaderOptions) {
    this.sizer = new RangeSizer(opts.maxBlockRange);
  }

  async head(): Promise<number> {
    return Number(await this.opts.rpc.call<Hex>('eth_blockNumber', []));
  }

  /** Headers of blocks `from..to`, in order; throws when the node lacks one. */
  async headers(from: number, to: number): Promise<BlockHeader[]> {
    const out: BlockHeader[] = [];
    for (let start = from; start <= to; start += this.opts.headerBatchSize) {
      const end = Math.min(to, start + this.opts.headerBatchSize - 1);
      const calls = [];
      for (let n = start; n <= end; n++)
        calls.push({ method: 'eth_getBlockByNumber', params: [hex(n), false] });
      const blocks = await this.opts.rpc.batch<{
        number: Hex;
        hash: Hex;
        parentHash: Hex;
        timestamp: Hex;
      } | null>(calls);
      blocks.forEach((b, k) => {
        if (!b) throw new RpcFault('RPC_ERROR', `block ${start + k} is not available yet`);
        out.push({
          number: Number(b.number),
          hash: b.hash,
          parentHash: b.parentHash,
          timestamp: Number(b.timestamp),
        });
      });
    }
    return out;
  }

  /**
   * Logs of the watched contracts from `from` up to at most `to`, asking for no more
   * than the current range; returns the last block covered (the range may have shrunk).
   */
  async logs(from: number, to: number): Promise<{ logs: RawLog[]; to: number }> {
    for (;;) {
      const end = Math.min(to, from + this.sizer.size - 1);
      try {
        const raw = await this.opts.rpc.call<RawJsonLog[]>('eth_getLogs', [
          {
            fromBlock: hex(from),
            toBlock: hex(end),
            address: this.opts.addresses,
            topics: [this.opts.topics],
          },
        ]);
        this.sizer.succeeded();
        return { logs: raw.map(parseLog), to: end };
      } catch (e) {
        if (!(e instanceof RpcFault && e.fault === 'RANGE_TOO_LARGE') || !this.sizer.shrink(end - from + 1))
          throw e;
      }
    }
  }

  /** Return data of each read at `block` (undefined where the call reverted or found no code). */
  async read(calls: ReadCall[], block: number): Promise<(Hex | undefined)[]> {
    if (!calls.length) return [];
    if (this.multicallKnown !== false) {
      const data = encodeFunctionData({
        abi: multicall3Abi,
        functionName: 'aggregate3',
        args: [calls.map((c) => ({ target: c.target, allowFailure: true, callData: c.data }))],
      });
      const answer = await this.opts.rpc.call<Hex>('eth_call', [
        { to: this.opts.multicall3, data },
        hex(block),
      ]);
      if (answer !== '0x') {
        this.multicallKnown = true;
        const results = decodeFunctionResult({
          abi: multicall3Abi,
          functionName: 'aggregate3',
          data: answer,
        });
        return results.map((r) => (r.success && r.returnData !== '0x' ? r.returnData : undefined));
      }
      // No code at the Multicall3 address on this chain (an empty answer): read one by one from now on.
      this.multicallKnown = false;
    }
    return this.readEach(calls, block);
  }

  private async readEach(calls: ReadCall[], block: number): Promise<(Hex | undefined)[]> {
    const out: (Hex | undefined)[] = [];
    for (const c of calls) {
      try {
        const data = await this.opts.rpc.call<Hex>('eth_call', [{ to: c.target, data: c.data }, hex(block)]);
        out.push(data === '0x' ? undefined : data);
      } catch (e) {
        if (e instanceof RpcFault && e.fault === 'RPC_ERROR') out.push(undefined);
        else throw e;
      }
    }
    return out;
  }
}

interface RawJsonLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  transactionHash: Hex;
  logIndex: Hex;
}

function parseLog(l: RawJsonLog): RawLog {
  return {
    address: l.address,
    topics: l.topics,
    data: l.data,
    blockNumber: Number(l.blockNumber),
    blockHash: l.blockHash,
    transactionHash: l.transactionHash,
    logIndex: Number(l.logIndex),
  };
}
