/**
 * One simulated chain: signs transactions locally with explicit nonces and fixed
 * gas (no estimation round trips), stamps each block with the simulated time when
 * time-travelling, and fails loudly on a revert, so the ground truth only records
 * what the chain really did.
 */
import {
  type Abi,
  type Address,
  createPublicClient,
  createTestClient,
  encodeFunctionData,
  type Hex,
  http,
  type Log,
  type PublicClient,
  type TestClient,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from 'viem';
import type { HDAccount } from 'viem/accounts';
import { VaultstreamError } from '../../core/errors.ts';

export interface SentTx {
  hash: Hex;
  blockNumber: bigint;
  blockHash: Hex;
  timestamp: number;
  logs: Log[];
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

export class SimChain {
  readonly pub: PublicClient;
  readonly test: TestClient;
  private readonly nonces = new Map<Address, number>();
  /** Simulated Unix time of the next block, or undefined in live mode (the node's clock). */
  private nextTime: number | undefined;
  private lastTime = 0;

  constructor(
    readonly chainId: number,
    readonly rpcUrl: string,
    private readonly clock: () => number = Date.now,
  ) {
    const transport = http(rpcUrl);
    this.pub = createPublicClient({ transport }) as PublicClient;
    this.test = createTestClient({ mode: 'anvil', transport }) as unknown as TestClient;
  }

  /** The time of the next transaction: simulated while time-travelling, else the clock's. */
  now(): number {
    return this.nextTime ?? Math.floor(this.clock() / 1000);
  }

  /** Time travel: the following transactions are mined at `unixSeconds`, one second apart. */
  travelTo(unixSeconds: number): void {
    this.nextTime = Math.max(unixSeconds, this.lastTime + 1);
  }

  /** Back to the node's own clock, first bringing the chain to `nowSeconds` with an empty block. */
  async goLive(nowSeconds: number): Promise<void> {
    const t = Math.max(nowSeconds, this.lastTime + 1);
    await this.test.setNextBlockTimestamp({ timestamp: BigInt(t) });
    await this.test.mine({ blocks: 1 });
    this.lastTime = t;
    this.nextTime = undefined;
  }

  /** Calls `functionName` on `to` as `account`; resolves once mined, throws if it reverted. */
  async send(
    account: HDAccount,
    to: Address,
    abi: Abi,
    functionName: string,
    args: unknown[] = [],
  ): Promise<SentTx> {
    const data = encodeFunctionData({ abi, functionName, args } as never);
    const nonce = await this.nonceOf(account.address);
    const raw = await account.signTransaction({
      type: 'eip1559',
      chainId: this.chainId,
      nonce,
      to,
      data,
      gas: 1_500_000n,
      maxFeePerGas: 20_000_000_000n,
      maxPriorityFeePerGas: 0n,
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
    return {
      hash,
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      timestamp,
      logs: receipt.logs as Log[],
    };
  }

  async read<T>(address: Address, abi: Abi, functionName: string, args: unknown[] = []): Promise<T> {
    return (await this.pub.readContract({ address, abi, functionName, args } as never)) as T;
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
