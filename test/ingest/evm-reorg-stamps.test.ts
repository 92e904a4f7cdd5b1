/**
 * A reorg reaching blocks known only from their logs (range-headers.ts: anvil puts each block's
 * `blockTimestamp` on its logs, so no header is read for a block holding a transfer below the
 * head's reorg window). A backfill range deeper than the window is ingested, the chain is
 * reorganized under its last blocks, and the follower restarts from its checkpoint: the orphaned
 * transfer is retracted, no `blocks` row is retracted for a block whose header was never stored,
 * and the common ancestor, known from its logs, is published again as the chain's header.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { checkpointFile } from '../../ingest/checkpoint.ts';
import { ChainReader } from '../../ingest/evm/chain.ts';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import { topicsOf } from '../../ingest/evm/decode.ts';
import { ChainFollower } from '../../ingest/evm/follower.ts';
import { MAPPED_EVENTS } from '../../ingest/evm/map.ts';
import { emittedPublisher } from '../../ingest/evm/publish.ts';
import type { ChainCheckpoint } from '../../ingest/evm/reorg.ts';
import { createEvmRpc } from '../../ingest/evm/rpc.ts';
import { EventCodec } from '../../schemas/codec.ts';
import {
  addr,
  anvilRpc,
  emitTransfers,
  liveEvents,
  openBus,
  readFamily,
  testConfig,
  useEmitterNode,
} from './evm-support.ts';

const chain = useEmitterNode('vs-evm-reorg-stamps-');
const WINDOW = 16;

describe('EVM follower, a reorg under blocks known from their logs', () => {
  it('retracts their events, retracts no header never stored, and publishes the ancestor as a header', async () => {
    const { node, emitter } = chain;
    const url = node.rpcUrl;
    const pub = createPublicClient({ transport: http(url) });
    const blockNumber = async () => Number(await pub.getBlockNumber({ cacheTime: 0 }));
    const start = (await blockNumber()) + 1;
    await anvilRpc(url, 'anvil_mine', ['0x14']);
    await emitTransfers(url, emitter, addr(0), addr(0xa1), 1n, 1);
    const kept = await blockNumber();
    await anvilRpc(url, 'anvil_mine', ['0x2']);
    const fork = await anvilRpc<string>(url, 'evm_snapshot');
    await emitTransfers(url, emitter, addr(0), addr(0xb2), 2n, 1);
    const orphan = await blockNumber();
    await anvilRpc(url, 'anvil_mine', ['0x2']);
    const end = await blockNumber();
    await anvilRpc(url, 'anvil_mine', ['0x64']);

    const dataDir = join(chain.root, 'stamps');
    // One range is [start, end] (maxBlockRange), far below the head's window.
    const config = testConfig({
      rpcUrls: [url],
      dataDir,
      chain: { startBlock: start, reorgWindow: WINDOW, maxBlockRange: end - start + 1 },
      vault: { vaultAddress: emitter },
      ingest: { snapshotIntervalSeconds: 86_400 },
    });
    const bus = await openBus(join(dataDir, 'bus'));
    const follower = () => {
      const contracts = chainContracts(config, config.chains[0]);
      const rpc = createEvmRpc({
        urls: [url],
        timeoutMs: 5_000,
        maxAttempts: 2,
        backoffMs: 10,
        maxBackoffMs: 20,
      });
      return new ChainFollower({
        contracts,
        reader: new ChainReader({
          rpc,
          addresses: contracts.addresses,
          topics: topicsOf(MAPPED_EVENTS),
          maxBlockRange: end - start + 1,
          headerBatchSize: 100,
          multicall3: config.chains[0].multicall3 as `0x${string}`,
        }),
        publish: emittedPublisher(bus, new EventCodec(), config.topicPrefix),
        checkpoint: checkpointFile<ChainCheckpoint>(dataDir, 'evm-31337'),
        log: silentLogger,
        clock: () => 0,
        snapshotIntervalSeconds: config.ingest.snapshotIntervalSeconds,
        onSnapshotError: () => {},
      });
    };

    const first = follower();
    expect((await first.round()).blocks).toBe(end - start + 1);
    await first.settle();
    const checkpoint = JSON.parse(readFileSync(join(dataDir, 'ingest', 'evm-31337.json'), 'utf8'));
    const tipOf = (n: number) => checkpoint.tip.find((b: { number: number }) => b.number === n);
    // Both transfer blocks are in the tip, known from their logs only (no parent hash, no header stored).
    for (const n of [kept, orphan]) {
      expect(tipOf(n), `tip block ${n}`).toBeDefined();
      expect(tipOf(n).parentHash).toBeUndefined();
    }
    const stored = () => readFamily(bus, config.topicPrefix, 'blocks');
    const storedNumbers = (await stored()).map((b) => b.blockNumber);
    expect(storedNumbers).toEqual(expect.arrayContaining([start, end]));
    expect(storedNumbers).not.toContain(kept);
    expect(storedNumbers).not.toContain(orphan);

    // The fork: the orphan's transfer and the blocks after it are replaced by a longer branch.
    await anvilRpc(url, 'evm_revert', [fork]);
    await emitTransfers(url, emitter, addr(0), addr(0xc3), 3n, 1);
    await anvilRpc(url, 'anvil_mine', ['0x78']);
    const head = await blockNumber();

    const second = follower();
    // The restarted follower sees the new branch under its tip: 2 blocks of the tip orphaned.
    expect(await second.round()).toMatchObject({ blocks: 0, retracted: 2 });
    while (second.next <= head) await second.round();
    await second.settle();

    const transfers = await readFamily(bus, config.topicPrefix, 'transfers');
    const retracted = transfers.filter((t) => t.removed);
    expect(retracted.map((t) => [t.blockNumber, t.blockHash])).toEqual([[orphan, tipOf(orphan).hash]]);
    const live = liveEvents(transfers, (t) => `${t.blockHash}:${t.logIndex}`);
    const logs = await pub.getLogs({ address: emitter, fromBlock: BigInt(start) });
    expect(live.map((t) => [t.blockNumber, t.txHash])).toEqual(
      logs.map((l) => [Number(l.blockNumber), l.transactionHash]),
    );
    for (const t of live)
      expect(t.blockTimestamp).toBe(
        Number((await pub.getBlock({ blockNumber: BigInt(t.blockNumber as number) })).timestamp),
      );

    const blocks = await stored();
    // Only the stored header of the old range's end is retracted, not the orphan known from its logs.
    expect(blocks.filter((b) => b.removed).map((b) => b.blockNumber)).toEqual([end]);
    // The ancestor, read by the unwind, is published as the chain has it: the watermark goes back to it.
    const ancestor = await pub.getBlock({ blockNumber: BigInt(kept) });
    expect(blocks.find((b) => b.blockNumber === kept && !b.removed)).toMatchObject({
      blockHash: ancestor.hash,
      parentHash: ancestor.parentHash,
      blockTimestamp: Number(ancestor.timestamp),
    });
    await bus.close();
  }, 90_000);
});
