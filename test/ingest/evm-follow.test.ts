/**
 * The EVM follower on a real anvil: backfill in small ranges, a reorg (evm_snapshot,
 * blocks, evm_revert, other blocks) whose orphaned events and headers come back as
 * retractions, a stop and restart that resumes from the checkpoint, and a snapshot at
 * the close of a UTC day. The truth is read from the node independently with viem.
 */
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import {
  addr,
  anvilRpc,
  EMITTER_ABI,
  emitTransfers,
  eventId,
  liveEvents,
  openBus,
  readFamily,
  testConfig,
  untilCaughtUp,
  useEmitterNode,
} from './evm-support.ts';

const chain = useEmitterNode('vs-evm-follow-');
const { root } = chain;
const ZERO = addr(0);
const alice = addr(0xa11ce);
const bob = addr(0xb0b);

const blockId = (r: Record<string, unknown>) => `${r.blockNumber}:${r.blockHash}`;

describe('EVM follower on anvil', () => {
  /** The chain's confirmations: the follower ingests up to the head less these. */
  const CONF = 4;
  it('backfills, retracts a reorg, resumes after a restart with no gap and no duplicate', async () => {
    const { node, emitter } = chain;
    const url = node.rpcUrl;
    const mine = (n: number) => anvilRpc(url, 'anvil_mine', [`0x${n.toString(16)}`]);
    const config = testConfig({
      rpcUrls: [url],
      dataDir: join(root, 'a'),
      chain: { maxBlockRange: 4, confirmations: CONF },
      vault: { vaultAddress: emitter },
    });
    const bus = await openBus(join(root, 'a', 'bus'));
    const codec = new EventCodec();
    const run = () => startEvmIngest({ config, bus, codec, log: silentLogger });
    const caughtUp = async (ingest: ReturnType<typeof run>) => {
      const head = Number(await anvilRpc<string>(url, 'eth_blockNumber'));
      await untilCaughtUp(ingest, head - CONF, 20_000, `block ${head - CONF}`);
    };

    for (let i = 0; i < 4; i++) {
      await emitTransfers(url, emitter, ZERO, alice, BigInt(100 * i + 1), 3);
      await mine(3);
    }
    let ingest = run();
    await caughtUp(ingest);

    // A fork: three blocks with events, ingested (CONF more mined), then replaced by others.
    const snap = await anvilRpc<string>(url, 'evm_snapshot');
    await emitTransfers(url, emitter, alice, bob, 7_000n, 2);
    await emitTransfers(url, emitter, alice, bob, 8_000n, 2);
    await mine(1 + CONF);
    await caughtUp(ingest);
    await anvilRpc(url, 'evm_revert', [snap]);
    await emitTransfers(url, emitter, bob, alice, 9_000n, 4);
    await mine(3);
    await caughtUp(ingest);
    await vi.waitFor(() => expect(ingest.progress()[0].reorgs, 'the reorg').toBe(1), {
      timeout: 10_000,
      interval: 25,
    });
    await ingest.stop();

    // Restart from the checkpoint after more blocks.
    await emitTransfers(url, emitter, alice, ZERO, 5n, 5);
    await mine(6);
    ingest = run();
    await caughtUp(ingest);
    await ingest.stop();
    // Read once stopped: the round that reached the head is recorded once its publish is durable,
    // which may come after `next` moved past the head (ingest/evm/follower.ts, publish ahead).
    const progress = ingest.progress()[0];

    const pub = createPublicClient({ transport: http(url) });
    const head = Number(await pub.getBlockNumber()) - CONF;
    const logs = await pub.getLogs({ address: emitter, fromBlock: 0n, toBlock: BigInt(head) });
    const canonical = logs.map((l) => ({
      chainId: 31337,
      blockNumber: Number(l.blockNumber),
      blockHash: l.blockHash,
      txHash: l.transactionHash,
      logIndex: l.logIndex,
      from: `0x${(l.topics[1] as string).slice(26)}`,
      to: `0x${(l.topics[2] as string).slice(26)}`,
      amount: BigInt(l.data).toString(),
    }));
    const transfers = await readFamily(bus, config.topicPrefix, 'transfers');
    const live = liveEvents(transfers, eventId).map((r) => ({
      chainId: r.chainId,
      blockNumber: r.blockNumber,
      blockHash: r.blockHash,
      txHash: r.txHash,
      logIndex: r.logIndex,
      from: r.from,
      to: r.to,
      amount: r.amount,
    }));
    expect(canonical).toHaveLength(3 * 4 + 4 + 5);
    expect(live).toEqual(canonical);

    // The orphaned events (2 txs x 2 transfers) were published, then retracted, newest first.
    const orphaned = transfers.filter(
      (r) => !r.removed && !canonical.some((c) => c.blockHash === r.blockHash),
    );
    expect(orphaned.map((r) => r.amount)).toEqual(['7000', '7001', '8000', '8001']);
    const retracted = transfers.filter((r) => r.removed);
    expect(retracted.map((r) => r.amount)).toEqual(['8001', '8000', '7001', '7000']);
    expect(retracted.map((r) => ({ ...r, removed: false }))).toEqual([...orphaned].reverse());
    // Every live event was published once: no duplicate across the reorg and the restart.
    expect(transfers.filter((r) => !r.removed)).toHaveLength(canonical.length + orphaned.length);

    const blocks = await readFamily(bus, config.topicPrefix, 'blocks');
    const headers = await Promise.all(
      Array.from({ length: head + 1 }, (_, n) => pub.getBlock({ blockNumber: BigInt(n) })),
    );
    expect(liveEvents(blocks, blockId)).toEqual(
      headers.map((h) => ({
        chainId: 31337,
        blockNumber: Number(h.number),
        blockHash: h.hash,
        parentHash: h.parentHash,
        blockTimestamp: Number(h.timestamp),
        removed: false,
      })),
    );
    const orphanBlocks = blocks.filter((b) => b.removed);
    expect(orphanBlocks).toHaveLength(3);
    // Every block once, the 3 orphaned ones, and the ancestor again after their retraction (the watermark).
    expect(blocks.filter((b) => !b.removed)).toHaveLength(head + 1 + 3 + 1);
    expect(progress.reorgs).toBe(0); // the second run saw no reorg
    expect(progress.blocksDone).toBe(progress.blocksTotal);

    // SUPPLY snapshots read the emitter's totalSupply at their block.
    const snaps = (await readFamily(bus, config.topicPrefix, 'snapshots')).filter((s) => s.kind === 'SUPPLY');
    expect(snaps.length).toBeGreaterThanOrEqual(1);
    for (const s of snaps) {
      const supply = await pub.readContract({
        address: emitter,
        abi: EMITTER_ABI,
        functionName: 'totalSupply',
        blockNumber: BigInt(s.blockNumber as number),
      });
      expect(s.amount).toBe(supply.toString());
      expect(s.token).toBe(emitter.toLowerCase());
    }
    await bus.close();
  }, 90_000);

  it('takes a snapshot at the last block of every UTC day the backfill crosses', async () => {
    const { node, emitter } = chain;
    const url = node.rpcUrl;
    const pub = createPublicClient({ transport: http(url) });
    const start = Number(await anvilRpc<string>(url, 'eth_blockNumber')) + 1;
    await emitTransfers(url, emitter, ZERO, bob, 1_000n, 2);
    const close = Number(await anvilRpc<string>(url, 'eth_blockNumber'));
    const { timestamp } = await pub.getBlock({ blockNumber: BigInt(close) });
    const nextDay = (Number(timestamp) / 86_400 + 1 - ((Number(timestamp) / 86_400) % 1)) * 86_400;
    await anvilRpc(url, 'evm_setNextBlockTimestamp', [Math.round(nextDay) + 5]);
    await emitTransfers(url, emitter, ZERO, bob, 5_000n, 3);
    await anvilRpc(url, 'anvil_mine', ['0x2']);
    const head = Number(await anvilRpc<string>(url, 'eth_blockNumber'));
    const config = testConfig({
      rpcUrls: [url],
      dataDir: join(root, 'days'),
      chain: { startBlock: start },
      vault: { vaultAddress: emitter },
      ingest: { snapshotIntervalSeconds: 86_400 },
    });
    const bus = await openBus(join(root, 'days', 'bus'));
    // A clock at 0 keeps the periodic snapshot from firing: only the day's close is read.
    const ingest = startEvmIngest({
      config,
      bus,
      codec: new EventCodec(),
      log: silentLogger,
      clock: () => 0,
    });
    await untilCaughtUp(ingest, head, 20_000, 'the backfill');
    await ingest.stop();
    const snaps = await readFamily(bus, config.topicPrefix, 'snapshots');
    const supply = await pub.readContract({
      address: emitter,
      abi: EMITTER_ABI,
      functionName: 'totalSupply',
      blockNumber: BigInt(close),
    });
    expect(snaps).toEqual([
      {
        vault: 'v1',
        chainId: 31337,
        blockNumber: close,
        timestamp: Number(timestamp),
        kind: 'SUPPLY',
        token: emitter.toLowerCase(),
        amount: supply.toString(),
        decimals: 6,
        usdPrice: '',
        apy7d: '',
        apy30d: '',
        weight: '',
        isPaused: false,
      },
    ]);
    await bus.close();
  }, 60_000);
});
