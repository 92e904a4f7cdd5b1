/**
 * Shared pieces of the EVM ingest tests: a registry with one vault of every contract
 * role, logs built with viem's encoders, and records checked against their family's
 * schema and Avro round trip.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Abi,
  type AbiEvent,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeEventTopics,
  type Hex,
  http,
  keccak256,
  type TransactionReceipt,
  toHex,
} from 'viem';
import type { Account } from 'viem/accounts';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import { InProcessBus } from '../../bus/inprocess.ts';
import { topicName } from '../../bus/partition.ts';
import type { Bus } from '../../bus/types.ts';
import { type Config, parseConfig } from '../../core/config.ts';
import { type AnvilNode, startAnvil } from '../../devnet/anvil.ts';
import { addr, deployEmitter } from '../../devnet/emitter.ts';
import type { SparseChain } from '../../devnet/sparse-chain.ts';
import { ChainReader } from '../../ingest/evm/chain.ts';
import { type RawLog, topicsOf } from '../../ingest/evm/decode.ts';
import type { EvmIngest } from '../../ingest/evm/index.ts';
import { MAPPED_EVENTS } from '../../ingest/evm/map.ts';
import type { Emitted } from '../../ingest/evm/map-context.ts';
import { createEvmRpc } from '../../ingest/evm/rpc.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { FAMILIES, type FamilyName } from '../../schemas/families.ts';

// The Emitter and its RPC helpers live in devnet/ (the EVM backfill benchmark uses them too).
export { addr, anvilRpc, deployEmitter, EMITTER_ABI, emitTransfers } from '../../devnet/emitter.ts';

export const A = {
  share: addr(0x5a1e),
  teller: addr(0x7e11),
  accountant: addr(0xacc0),
  authority: addr(0xa117),
  queue: addr(0x0a0e),
  nestVault: addr(0x4e57),
  usdc: addr(0x05dc),
  usdt: addr(0x05d7),
  proxy: '0x6104fe10ca937a086ba7adbd0910a4733d380cb6' as Hex,
};

/** A config with one vault (`v1`) on chain 31337 watching every contract role. */
export function testConfig(
  over: {
    rpcUrls?: string[];
    dataDir?: string;
    chain?: Record<string, unknown>;
    vault?: Record<string, unknown>;
    ingest?: Record<string, unknown>;
  } = {},
): Config {
  return parseConfig({
    dataDir: over.dataDir ?? '/nonexistent',
    chains: [localChain({ rpcUrls: over.rpcUrls ?? [], atomicQueues: [A.queue], ...over.chain })],
    vaults: [
      {
        ...usdcVault({
          slug: 'v1',
          name: 'Vault One',
          share: A.share,
          teller: A.teller,
          accountant: A.accountant,
          authority: A.authority,
          nestVault: A.nestVault,
          usdc: A.usdc,
        }),
        ...over.vault,
      },
    ],
    ingest: over.ingest ?? {},
  });
}

/** Raw config of chain 31337 as the tests poll it (no confirmations: every mined block is ingested; every 50 ms), with `over` applied. */
export function localChain(over: Record<string, unknown> = {}): Record<string, unknown> {
  // No request rate limit: a local node, not a public endpoint.
  return {
    chainId: 31337,
    name: 'local',
    rpcUrls: [],
    confirmations: 0,
    pollIntervalMs: 50,
    maxRequestsPerSecond: 0,
    ...over,
  };
}

/** Raw config of a 6-decimal vault on chain 31337 with a USDC base asset, its NestVault and liquid USDC. */
export function usdcVault(v: {
  slug: string;
  name: string;
  share: Hex;
  teller: Hex;
  accountant: Hex;
  authority: Hex;
  nestVault: Hex;
  usdc: Hex;
}): Record<string, unknown> {
  return {
    slug: v.slug,
    name: v.name,
    symbol: v.slug.toUpperCase(),
    decimals: 6,
    vaultAddress: v.share,
    tellerContractAddress: v.teller,
    accountantAddress: v.accountant,
    authorityAddress: v.authority,
    chainIds: [31337],
    baseAsset: { symbol: 'USDC', decimals: 6, usdPrice: 1 },
    coreVaults: [
      {
        coreVaultAddress: v.nestVault,
        asset: 'USDC',
        chainAssets: [{ chainId: 31337, assetAddress: v.usdc }],
      },
    ],
    liquidAssets: [{ contractAddress: v.usdc, symbol: 'USDC', decimals: 6, price: 0.9998, chainId: 31337 }],
  };
}

/** An in-process bus (4 partitions) in `dir`, connected. */
export async function openBus(dir: string): Promise<InProcessBus> {
  const bus = new InProcessBus({ dir, partitions: 4 });
  await bus.connect();
  return bus;
}

/** Waits until the first chain of `ingest` has taken every block up to `head`. */
/**
 * A reader of a sparse chain on loopback (devnet/sparse-chain.ts), its token's mapped events: one
 * attempt per call (a fault is the test's to see), 100 headers a batch, the canonical Multicall3.
 */
export function sparseChainReader(chain: SparseChain, maxBlockRange = 1_000_000_000): ChainReader {
  return new ChainReader({
    rpc: createEvmRpc({ urls: [chain.url], timeoutMs: 5_000, maxAttempts: 1, backoffMs: 1, maxBackoffMs: 1 }),
    addresses: [chain.token],
    topics: topicsOf(MAPPED_EVENTS),
    maxBlockRange,
    headerBatchSize: 100,
    multicall3: '0xcA11bde05977b3631167028862bE2a173976CA11',
  });
}

export function untilCaughtUp(ingest: EvmIngest, head: number, ms: number, what: string): Promise<void> {
  return vi.waitFor(() => expect(ingest.progress()[0]?.next, what).toBe(head + 1), {
    timeout: ms,
    interval: 25,
  });
}

/** The identity of a chain event across retractions. */
export const eventId = (r: Record<string, unknown>) => `${r.blockHash}:${r.logIndex}`;

/**
 * Registers the suite's anvil node (chain 31337) and a temporary directory named after
 * `prefix`, both gone after the suite.
 */
export function useAnvilNode(prefix: string): { readonly node: AnvilNode; root: string } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  let node: AnvilNode | undefined;
  beforeAll(async () => {
    node = await startAnvil({ chainId: 31337 });
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    rmSync(root, { recursive: true, force: true });
  });
  return {
    root,
    get node() {
      if (!node) throw new Error('the anvil node is used before beforeAll started it');
      return node;
    },
  };
}

/** useAnvilNode with the test Emitter deployed on the node. */
export function useEmitterNode(prefix: string): {
  readonly node: AnvilNode;
  readonly emitter: Hex;
  root: string;
} {
  const chain = useAnvilNode(prefix);
  let emitter: Hex | undefined;
  beforeAll(async () => {
    emitter = await deployEmitter(chain.node.rpcUrl);
  }, 60_000);
  return {
    root: chain.root,
    get node() {
      return chain.node;
    },
    get emitter() {
      if (!emitter) throw new Error('the emitter is used before beforeAll deployed it');
      return emitter;
    },
  };
}

export const blockHash = (n: number): Hex => keccak256(toHex(`block-${n}`));
export const txHash = (n: number): Hex => keccak256(toHex(`tx-${n}`));

/** A log of `event` at `address` with `args`, encoded as a node would answer it. */
export function logOf(
  address: Hex,
  event: AbiEvent,
  args: Record<string, unknown>,
  at: { block: number; tx: number; index: number },
): RawLog {
  const topics = encodeEventTopics({ abi: [event], eventName: event.name, args } as never) as Hex[];
  const plain = event.inputs.filter((i) => !i.indexed);
  const data = encodeAbiParameters(
    plain,
    plain.map((i) => args[i.name as string]),
  );
  return {
    address,
    topics,
    data,
    blockNumber: at.block,
    blockHash: blockHash(at.block),
    transactionHash: txHash(at.tx),
    logIndex: at.index,
  };
}

/** The event of `abi` named `name` (the first with `inputs` when several share it). */
export function ev(abi: readonly unknown[], name: string, inputs?: number): AbiEvent {
  const e = (abi as AbiEvent[]).find(
    (i) => i.type === 'event' && i.name === name && (inputs === undefined || i.inputs.length === inputs),
  );
  if (!e) throw new Error(`no event ${name}`);
  return e;
}

const codec = new EventCodec();

/** Validates every record with its family's schema and Avro, returning the decoded (canonical) records. */
export function canonical(items: Emitted[]): { family: string; record: Record<string, unknown> }[] {
  return items.map(({ family, record }) => {
    const parsed = FAMILIES[family].schema.parse(record);
    const back = codec.decodeSync(family, codec.encodeSync(family, parsed));
    return { family, record: back?.value as Record<string, unknown> };
  });
}

/** Every record of `family` published on the bus so far, decoded, in partition order. */
export async function readFamily(
  bus: Bus,
  prefix: string,
  family: FamilyName,
): Promise<Record<string, unknown>[]> {
  const out: { partition: number; offset: bigint; record: Record<string, unknown> }[] = [];
  const sub = await bus.subscribe({
    groupId: `reader-${family}-${Math.random()}`,
    topics: [topicName(prefix, family)],
    maxBatchSize: 100_000,
    maxWaitMs: 0,
    handler: async (b) => {
      for (const m of b.messages)
        out.push({
          partition: b.partition,
          offset: m.offset,
          record: (await codec.decode(family, m.value)) as Record<string, unknown>,
        });
    },
  });
  await sub.drained();
  await sub.stop();
  return out
    .sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0))
    .map((x) => x.record);
}

/** The live state of chain events after applying retractions: identity -> last record, only live ones. */
export function liveEvents(records: Record<string, unknown>[], idOf: (r: Record<string, unknown>) => string) {
  const state = new Map<string, Record<string, unknown>>();
  for (const r of records) state.set(idOf(r), r);
  return [...state.values()].filter((r) => !r.removed);
}

/** Calls `functionName` on `address` from `who`, waits for the receipt, and throws when it reverted. */
export async function sendTx(
  url: string,
  who: Account,
  address: Hex,
  abi: Abi,
  functionName: string,
  args: unknown[],
): Promise<TransactionReceipt> {
  const wallet = createWalletClient({ account: who, transport: http(url) });
  const hash = await wallet.writeContract({ address, abi, functionName, args, chain: null } as never);
  const r = await createPublicClient({ transport: http(url) }).waitForTransactionReceipt({
    hash,
    pollingInterval: 20,
  });
  if (r.status !== 'success') throw new Error(`${functionName} reverted`);
  return r;
}
