/**
 * A node that dropped old blocks' transactions (anvil's `--transaction-block-keeper`, which the
 * devnet's nodes take after their restart: `devnet.liveTransactionBlocks`) answers eth_getLogs
 * for those blocks with nothing and no error. An ingester asking for them (say, one resumed
 * from an old checkpoint) must fail loudly, not publish an empty stretch of chain and move on:
 * the header of a range's first and last block tells (no transactions under a non-empty root).
 * Here, on a real anvil keeping 10 blocks' transactions: the follower started at block 0 stops
 * at its first range with that error and publishes nothing; a node keeping everything (the
 * same emitter history) is read whole, empty blocks included (no false alarm on them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { type AnvilNode, startAnvil } from '../../devnet/anvil.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import {
  addr,
  anvilRpc,
  deployEmitter,
  emitTransfers,
  eventId,
  liveEvents,
  openBus,
  readFamily,
  testConfig,
  untilCaughtUp,
} from './evm-support.ts';

const KEPT = 10;
const root = mkdtempSync(join(tmpdir(), 'vs-evm-dropped-'));
const nodes: AnvilNode[] = [];
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  rmSync(root, { recursive: true, force: true });
});

/** A node (keeping `keep` blocks' transactions, or all) with 6 blocks of transfers, then 20 more blocks of them, empty ones between. */
async function chainOn(keep: number | undefined) {
  const node = await startAnvil({ chainId: 31337, keepTransactionBlocks: keep });
  nodes.push(node);
  const emitter = await deployEmitter(node.rpcUrl);
  for (let i = 0; i < 26; i++) {
    await emitTransfers(node.rpcUrl, emitter, addr(0), addr(0xa11ce), BigInt(100 * i + 1), 2);
    if (i % 5 === 0) await anvilRpc(node.rpcUrl, 'anvil_mine', ['0x3']);
  }
  return { node, emitter };
}

async function ingestFrom0(name: string, url: string, emitter: `0x${string}`) {
  const config = testConfig({
    rpcUrls: [url],
    dataDir: join(root, name),
    chain: { maxBlockRange: 8 },
    vault: { vaultAddress: emitter },
  });
  const bus = await openBus(join(root, name, 'bus'));
  const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
  return { config, bus, ingest };
}

describe('an ingester against a node that dropped old transactions', () => {
  it('fails loudly at the first such block instead of reading it as empty', async () => {
    const { node, emitter } = await chainOn(KEPT);
    const head = Number(await anvilRpc<string>(node.rpcUrl, 'eth_blockNumber'));
    // The node's own answer for the early blocks: their transfers are gone, silently.
    const early = await anvilRpc<unknown[]>(node.rpcUrl, 'eth_getLogs', [
      { fromBlock: '0x0', toBlock: `0x${(head - KEPT - 1).toString(16)}`, address: emitter },
    ]);
    expect(early, 'eth_getLogs over the dropped blocks').toEqual([]);

    const { config, bus, ingest } = await ingestFrom0('kept', node.rpcUrl, emitter);
    await vi.waitFor(
      () => {
        const p = ingest.progress()[0];
        expect(p.phase).toBe('failing');
        expect(p.lastError).toMatch(/block \d+: the node no longer holds its transactions, nor its logs/);
      },
      { timeout: 20_000, interval: 50 },
    );
    const next = ingest.progress()[0].next;
    await ingest.stop();
    expect(next, 'no range past a dropped block was taken').toBeLessThanOrEqual(8);
    expect(await readFamily(bus, config.topicPrefix, 'transfers')).toEqual([]);
  }, 60_000);

  it('reads a node keeping every transaction whole, its empty blocks included', async () => {
    const { node, emitter } = await chainOn(undefined);
    const head = Number(await anvilRpc<string>(node.rpcUrl, 'eth_blockNumber'));
    const { config, bus, ingest } = await ingestFrom0('all', node.rpcUrl, emitter);
    await untilCaughtUp(ingest, head, 20_000, `block ${head}`);
    await ingest.stop();
    const transfers = liveEvents(await readFamily(bus, config.topicPrefix, 'transfers'), eventId);
    expect(transfers).toHaveLength(26 * 2);
  }, 60_000);
});
