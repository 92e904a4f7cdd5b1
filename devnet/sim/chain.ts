/**
 * One simulated chain: sends transactions with explicit nonces and fixed gas (no
 * estimation round trips), stamps each block with the simulated time when
 * time-travelling, and fails loudly on a revert, so the ground truth only records
 * what the chain really did.
 *
 * History (`startHistory` .. `goLive`) is written in blocks of many transactions: anvil's
 * automine is off, the transactions sent at one simulated time go to the pool in order
 * (`--order fifo`, devnet/anvil.ts) and are mined together in one block stamped with that
 * time when the time moves on, a read needs the state, or a receipt is asked for. A block
 * costs anvil about as much as a transaction, so this writes the backfill several times
 * faster than a block per transaction; the senders are anvil's unlocked accounts, so no
 * transaction is signed here either. A live tick is written the same way (`startTick` ..
 * `endTick`: its transactions in one block at the node's time), so a running devnet adds a
 * block per tick, not one per transaction; the reorg sends one transaction per block.
 */
import {
  type Abi,
  type Address,
  type ContractFunctionParameters,
  createPublicClient,
  createTestClient,
  encodeFunctionData,
  formatTransactionReceipt,
  type Hex,
  type Log,
  type PublicClient,
  type RpcTransactionReceipt,
  type TestClient,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  toHex,
  webSocket,
} from 'viem';
import type { HDAccount } from 'viem/accounts';
import { VaultstreamError } from '../../core/errors.ts';

/** Where a transaction was mined and what it logged. */
export interface MinedTx {
  blockNumber: bigint;
  blockHash: Hex;
  logs: Log[];
}

export interface SentTx {
  hash: Hex;
  /** Its block's time (while writing history, known when it is sent). */
  timestamp: number;
  /** Its block and logs: mines the block being filled first, if it is in it. */
  mined(): Promise<MinedTx>;
}

/** A transaction in the block being filled, settled when the block is mined. */
interface PendingTx {
  hash: Hex;
  what: string;
  settle(m: MinedTx): void;
  result: Promise<MinedTx>;
}

/**
 * The transaction's receipt: at once under automine, polled every 10 ms otherwise
 * (interval mining). viem's waitForTransactionReceipt is avoided on purpose: it
 * watches block numbers, which time travel confuses.
 */
export async function waitMined(pub: PublicClient, hash: Hex, what: string): Promise<TransactionReceipt> {
  for (let waited = 0; waited < 30_000; waited += 10) {
    const r = await pub.getTransactionReceipt({ hash }).catch((err: unknown) => {
      if (err instanceof TransactionReceiptNotFoundError) return undefined;
      throw err;
    });
    if (r) return r;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new VaultstreamError('TIMEOUT', `${what}: transaction ${hash} was not mined within 30 s`);
}

/** Fixed gas and fees: no estimation round trips. */
const FEES = { gas: 1_500_000n, maxFeePerGas: 20_000_000_000n, maxPriorityFeePerGas: 0n } as const;

export class SimChain {
  pub!: PublicClient;
  test!: TestClient;
  private readonly nonces = new Map<Address, number>();
  /** Simulated Unix time of the next block, or undefined in live mode (the node's clock). */
  private nextTime: number | undefined;
  private lastTime = 0;
  /** Writing history: automine off, blocks of many transactions. */
  private batching = false;
  /** The block being filled while batching: its time and transactions, in order. */
  private block: { time: number; txs: PendingTx[] } | undefined;

  constructor(
    readonly chainId: number,
    readonly rpcUrl: string,
    private readonly clock: () => number = Date.now,
  ) {
    this.connect();
  }

  private connect(): void {
    // One WebSocket to the node: a request over it costs a fraction of an HTTP request's
    // client work, which bounded how fast history was written (most of the Node process's time).
    const transport = webSocket(this.rpcUrl.replace(/^http/, 'ws'), { reconnect: false });
    this.pub = createPublicClient({ transport }) as PublicClient;
    this.test = createTestClient({ mode: 'anvil', transport }) as unknown as TestClient;
  }

  /** A new connection, to a node restarted on the same URL (devnet/anvil.ts `refresh`). */
  async reconnect(): Promise<void> {
    await this.close();
    this.connect();
  }

  /** The time of the next transaction: simulated while time-travelling, else the clock's. */
  now(): number {
    return this.nextTime ?? Math.floor(this.clock() / 1000);
  }

  /**
   * Time travel: the following transactions are mined at `unixSeconds` (while writing
   * history, together in one block; else one second apart).
   */
  travelTo(unixSeconds: number): void {
    this.nextTime = Math.max(unixSeconds, this.lastTime + 1, this.block?.time ?? 0);
  }

  /** Starts writing history: blocks of many transactions until `goLive`. */
  async startHistory(): Promise<void> {
    await this.test.setAutomine(false);
    this.batching = true;
  }

  /** A live tick: its transactions go into one block at the clock's time (or just after the last block). */
  async startTick(): Promise<void> {
    // The head's time: the node may have mined blocks of its own (anvil_mine, the reorg's).
    this.lastTime = Math.max(this.lastTime, Number((await this.pub.getBlock()).timestamp));
    await this.test.setAutomine(false);
    this.batching = true;
    this.travelTo(Math.floor(this.clock() / 1000));
  }

  /** Mines the tick's block and goes back to a block per transaction on the node's clock. */
  async endTick(): Promise<void> {
    await this.flush();
    await this.test.setAutomine(true);
    this.batching = false;
    this.nextTime = undefined;
  }

  /** Back to the node's own clock, first bringing the chain to `nowSeconds` with an empty block. */
  async goLive(nowSeconds: number): Promise<void> {
    await this.flush();
    const t = Math.max(nowSeconds, this.lastTime + 1);
    await this.test.setNextBlockTimestamp({ timestamp: BigInt(t) });
    await this.test.mine({ blocks: 1 });
    if (this.batching) await this.test.setAutomine(true);
    this.batching = false;
    this.lastTime = t;
    this.nextTime = undefined;
  }

  /** Mines the block being filled (while writing history); throws if a transaction in it reverted. */
  async flush(): Promise<void> {
    const block = this.block;
    if (!block) return;
    this.block = undefined;
    await this.pub.request({ method: 'evm_mine', params: [{ timestamp: block.time }] } as never);
    const raw = (await this.pub.request({
      method: 'eth_getBlockReceipts',
      params: ['latest'],
    } as never)) as RpcTransactionReceipt[];
    const receipts = new Map(raw.map((r) => [r.transactionHash, formatTransactionReceipt(r)]));
    this.lastTime = block.time;
    for (const tx of block.txs) {
      const r = receipts.get(tx.hash);
      if (!r)
        throw new VaultstreamError(
          'INTERNAL',
          `devnet ${this.chainId}: ${tx.what} (${tx.hash}) is not in the block mined at ${block.time}`,
        );
      if (r.status !== 'success')
        throw new VaultstreamError('INTERNAL', `devnet ${this.chainId}: ${tx.what} reverted (${tx.hash})`);
      tx.settle({ blockNumber: r.blockNumber, blockHash: r.blockHash, logs: r.logs as Log[] });
    }
  }

  /**
   * Calls `functionName` on `to` as `account`. One transaction per block: resolves once mined,
   * throws if it reverted. While writing history: resolves once it is in the pool, for the
   * block of the current simulated time (a revert throws when that block is mined).
   */
  async send(
    account: HDAccount,
    to: Address,
    abi: Abi,
    functionName: string,
    args: unknown[] = [],
  ): Promise<SentTx> {
    const data = encodeFunctionData({ abi, functionName, args } as never);
    const nonce = await this.nonceOf(account.address);
    const what = `${functionName} on ${to} (nonce ${nonce})`;
    if (this.batching) return this.sendToBlock(account.address, to, data, nonce, what);
    const raw = await account.signTransaction({
      type: 'eip1559',
      chainId: this.chainId,
      nonce,
      to,
      data,
      ...FEES,
    });
    const stamped = this.nextTime;
    if (stamped !== undefined) {
      await this.test.setNextBlockTimestamp({ timestamp: BigInt(stamped) });
      this.nextTime = stamped + 1;
    }
    const hash = await this.pub.sendRawTransaction({ serializedTransaction: raw });
    this.nonces.set(account.address, nonce + 1);
    const receipt = await waitMined(this.pub, hash, `devnet ${this.chainId}: ${functionName} nonce ${nonce}`);
    if (receipt.status !== 'success')
      throw new VaultstreamError(
        'INTERNAL',
        `devnet ${this.chainId}: ${functionName} on ${to} reverted (${hash})`,
      );
    const timestamp =
      stamped ?? Number((await this.pub.getBlock({ blockHash: receipt.blockHash })).timestamp);
    this.lastTime = Math.max(this.lastTime, timestamp);
    const mined = {
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      logs: receipt.logs as Log[],
    };
    return { hash, timestamp, mined: async () => mined };
  }

  /** Sends from an unlocked anvil account into the pool, for the block of the current simulated time. */
  private async sendToBlock(
    from: Address,
    to: Address,
    data: Hex,
    nonce: number,
    what: string,
  ): Promise<SentTx> {
    const time = this.nextTime;
    if (time === undefined)
      throw new VaultstreamError(
        'INTERNAL',
        `devnet ${this.chainId}: ${what} sent while writing history without a time`,
      );
    if (this.block && this.block.time !== time) await this.flush();
    const hash = (await this.pub.request({
      method: 'eth_sendTransaction',
      params: [
        {
          from,
          to,
          data,
          nonce: toHex(nonce),
          gas: toHex(FEES.gas),
          maxFeePerGas: toHex(FEES.maxFeePerGas),
          maxPriorityFeePerGas: toHex(FEES.maxPriorityFeePerGas),
        },
      ],
    } as never)) as Hex;
    this.nonces.set(from, nonce + 1);
    let settle!: (m: MinedTx) => void;
    const result = new Promise<MinedTx>((r) => {
      settle = r;
    });
    if (!this.block) this.block = { time, txs: [] };
    const block = this.block;
    block.txs.push({ hash, what, settle, result });
    return {
      hash,
      timestamp: time,
      mined: async () => {
        if (this.block === block) await this.flush();
        return result;
      },
    };
  }

  /** Closes the connection to the node. */
  async close(): Promise<void> {
    const transport = this.pub.transport as { getRpcClient?: () => Promise<{ close(): void }> };
    (await transport.getRpcClient?.())?.close();
  }

  /** A view call on the latest state (the block being filled is mined first). */
  async read<T>(address: Address, abi: Abi, functionName: string, args: unknown[] = []): Promise<T> {
    await this.flush();
    return (await this.pub.readContract({ address, abi, functionName, args } as never)) as T;
  }

  /**
   * View calls on the latest block's state in one Multicall3 call at `multicall` (the block being
   * filled is mined first): that block, its time and the results, in order; any revert throws.
   */
  async readAll(
    multicall: Address,
    calls: ContractFunctionParameters[],
  ): Promise<{ block: bigint; time: number; results: unknown[] }> {
    await this.flush();
    const head = await this.pub.getBlock();
    const results = await this.pub.multicall({
      contracts: calls,
      multicallAddress: multicall,
      allowFailure: false,
      blockNumber: head.number,
    });
    return { block: head.number, time: Number(head.timestamp), results: results as unknown[] };
  }

  async snapshot(): Promise<Hex> {
    return this.test.snapshot();
  }

  /** Reverts to `id` and forgets cached nonces (the reverted transactions no longer count). */
  async revert(id: Hex): Promise<void> {
    await this.test.revert({ id });
    this.nonces.clear();
    const head = await this.pub.getBlock();
    this.lastTime = Number(head.timestamp);
  }

  private async nonceOf(address: Address): Promise<number> {
    const cached = this.nonces.get(address);
    if (cached !== undefined) return cached;
    const n = await this.pub.getTransactionCount({ address, blockTag: 'pending' });
    this.nonces.set(address, n);
    return n;
  }
}
