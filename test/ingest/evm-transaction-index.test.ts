/**
 * The transfer's `transactionIndex` end to end on anvil: blocks holding several transactions
 * (automine off, then one block mined), ingested into the in-process bus, stored by the
 * stream processor in chDB; each stored `transaction_index` must be the `transactionIndex`
 * of the receipt of the transaction that emitted the log, read from the node with viem.
 */
import { join } from 'node:path';
import { createPublicClient, createWalletClient, type Hex, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { createStore } from '../../store/client.ts';
import { StreamProcessor } from '../../streams/processor.ts';
import { migrate } from '../../views/migrate.ts';
import {
  addr,
  anvilRpc,
  EMITTER_ABI,
  emitTransfers,
  openBus,
  testConfig,
  untilCaughtUp,
  useEmitterNode,
} from './evm-support.ts';

const chain = useEmitterNode('vs-evm-txindex-');
const ZERO = addr(0);
const alice = addr(0xa11ce);
const bob = addr(0xb0b);
/** anvil's second development account (the emitter helpers use the first). */
const SENDER = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

describe('transfer transactionIndex on anvil', () => {
  it('stores each transfer with the transactionIndex of its receipt', async () => {
    const { node, emitter, root } = chain;
    const url = node.rpcUrl;
    const config = testConfig({
      rpcUrls: [url],
      dataDir: join(root, 'data'),
      chain: { confirmations: 2 },
      vault: { vaultAddress: emitter },
    });
    const store = await createStore(config);
    await migrate(store, { database: config.store.database, cluster: config.store.cluster });
    const bus = await openBus(join(root, 'bus'));
    const codec = new EventCodec();
    const processor = new StreamProcessor({ bus, store, codec, config, log: silentLogger });
    await processor.start();
    const ingest = startEvmIngest({ config, bus, codec, log: silentLogger });
    try {
      // One block of six transactions, transfers in four of them (at indexes 1, 2, 4, 5): the
      // others move ether and emit nothing. Then a block with one transaction (index 0).
      const wallet = createWalletClient({ account: SENDER, transport: http(url) });
      await anvilRpc(url, 'evm_setAutomine', [false]);
      const send = (k: number) =>
        k % 3 === 0
          ? wallet.sendTransaction({ to: bob, value: 1n, chain: null })
          : wallet.writeContract({
              address: emitter,
              abi: EMITTER_ABI,
              functionName: 'emitTransfers',
              args: [ZERO, alice, BigInt(100 * k + 1), BigInt(k)],
              chain: null,
              gas: 1_000_000n,
            });
      const sent: Hex[] = [];
      for (let k = 0; k < 6; k++) sent.push(await send(k));
      await anvilRpc(url, 'anvil_mine', ['0x1']);
      await anvilRpc(url, 'evm_setAutomine', [true]);
      await emitTransfers(url, emitter, alice, bob, 9_000n, 3);
      await anvilRpc(url, 'anvil_mine', ['0x3']);

      const pub = createPublicClient({ transport: http(url) });
      const head = Number(await pub.getBlockNumber());
      // Two confirmations: the follower ingests up to the head less two (the transfers are deeper).
      await untilCaughtUp(ingest, head - 2, 30_000, `block ${head - 2}`);
      const logs = await pub.getLogs({ address: emitter, fromBlock: 0n, toBlock: BigInt(head) });
      const receipts = new Map<string, number>();
      for (const hash of new Set(logs.map((l) => l.transactionHash as Hex)))
        receipts.set(hash, (await pub.getTransactionReceipt({ hash })).transactionIndex);
      const truth = new Map(
        logs.map((l) => [`${l.blockHash}:${l.logIndex}`, receipts.get(l.transactionHash as Hex)]),
      );
      // The block of several transactions is there, with its transfers at four indexes.
      const mined = await Promise.all(sent.map((hash) => pub.getTransactionReceipt({ hash })));
      expect(new Set(mined.map((r) => r.blockNumber)).size).toBe(1);
      expect(logs).toHaveLength(1 + 2 + 4 + 5 + 3);
      expect([...new Set(truth.values())].sort()).toEqual([0, 1, 2, 4, 5]);

      const table = `${config.store.database}.transfers_raw`;
      const stored = await vi.waitFor(
        async () => {
          const rows = await store.query<{
            block_hash: string;
            log_index: number;
            transaction_index: number;
          }>(
            `SELECT block_hash, log_index, transaction_index FROM ${table} FINAL ORDER BY block_number, log_index`,
          );
          expect(rows.length, 'transfers stored').toBe(truth.size);
          return rows;
        },
        { timeout: 30_000, interval: 100 },
      );
      const got = new Map(
        stored.map((r) => [`${r.block_hash}:${Number(r.log_index)}`, Number(r.transaction_index)]),
      );
      expect(got).toEqual(truth);
    } finally {
      await ingest.stop();
      await processor.stop();
      await bus.close();
      await store.close();
    }
  });
});
