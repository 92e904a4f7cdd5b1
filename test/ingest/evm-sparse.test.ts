/**
 * A sparse chain on a real anvil: about 3,000 blocks over six UTC days, transfers in six of
 * them. The follower reads only the headers it needs (range-headers.ts): each block holding a
 * transfer, each range's first and last block, the reorg window below the head, and the last
 * block of each UTC day (found by a search on timestamps), where it takes the day's snapshot.
 * The node's own answers are the truth; the header reads are counted on the wire.
 */
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import {
  addr,
  anvilRpc,
  emitTransfers,
  liveEvents,
  openBus,
  readFamily,
  testConfig,
  untilCaughtUp,
  useEmitterNode,
} from './evm-support.ts';

const chain = useEmitterNode('vs-evm-sparse-');
const DAY = 86_400;
const WINDOW = 8;

/** Counts the JSON-RPC calls of each method that go through `fetch` (batches item by item). */
function countingFetch(counts: Map<string, number>): typeof fetch {
  return (input, init) => {
    const body = JSON.parse(String(init?.body ?? '{}'));
    for (const c of Array.isArray(body) ? body : [body])
      counts.set(c.method, (counts.get(c.method) ?? 0) + 1);
    return fetch(input, init);
  };
}

describe('EVM follower on a sparse chain', () => {
  it('reads the headers of event blocks, range ends, the window and day closes only', async () => {
    const { node, emitter } = chain;
    const url = node.rpcUrl;
    const pub = createPublicClient({ transport: http(url) });
    const start = Number(await pub.getBlockNumber()) + 1;
    // 6 x (499 empty blocks 173 s apart, then a block of 2 transfers): about six days.
    for (let i = 0; i < 6; i++) {
      await anvilRpc(url, 'anvil_mine', ['0x1f3', '0xad']);
      await emitTransfers(url, emitter, addr(0), addr(0xa11ce + i), BigInt(10 * i + 1), 2);
    }
    await anvilRpc(url, 'anvil_mine', ['0x14', '0xad']);
    const head = Number(await pub.getBlockNumber());
    const config = testConfig({
      rpcUrls: [url],
      dataDir: join(chain.root, 'sparse'),
      chain: { startBlock: start, reorgWindow: WINDOW, maxBlockRange: 100_000 },
      vault: { vaultAddress: emitter },
      ingest: { snapshotIntervalSeconds: DAY },
    });
    const bus = await openBus(join(chain.root, 'sparse', 'bus'));
    const counts = new Map<string, number>();
    // A clock at 0 keeps the periodic snapshot from firing: only the days' closes are read.
    const ingest = startEvmIngest({
      config,
      bus,
      codec: new EventCodec(),
      log: silentLogger,
      clock: () => 0,
      rpc: { fetch: countingFetch(counts) },
    });
    await untilCaughtUp(ingest, head, 30_000, 'the backfill');
    await ingest.stop();
    // /status shows what the backfill cost: the calls by method, as they went over the wire.
    expect(ingest.progress()[0].rpcCalls).toEqual(Object.fromEntries(counts));

    const transfers = await readFamily(bus, config.topicPrefix, 'transfers');
    expect(transfers).toHaveLength(12);
    const blocks = liveEvents(await readFamily(bus, config.topicPrefix, 'blocks'), (b) => `${b.blockNumber}`);
    const stored = new Map(blocks.map((b) => [b.blockNumber as number, b]));
    // Each stored header is the chain's.
    for (const b of blocks) {
      const h = await pub.getBlock({ blockNumber: BigInt(b.blockNumber as number) });
      expect([b.blockHash, b.parentHash, b.blockTimestamp]).toEqual([
        h.hash,
        h.parentHash,
        Number(h.timestamp),
      ]);
    }
    // Every block holding a transfer, the first and the head, and the whole window below the head.
    for (const n of [start, ...transfers.map((t) => t.blockNumber as number)])
      expect(stored.has(n), `block ${n}`).toBe(true);
    for (let n = head - WINDOW + 1; n <= head; n++) expect(stored.has(n), `window block ${n}`).toBe(true);

    // The day closes: for each UTC day ending between the start and the head, the day's last block
    // (the newest with a timestamp before midnight) holds the day's snapshot and its header.
    const time = async (n: number) => Number((await pub.getBlock({ blockNumber: BigInt(n) })).timestamp);
    const closes: number[] = [];
    for (let day = Math.floor((await time(start)) / DAY) + 1; day * DAY <= (await time(head)); day++) {
      let lo = start;
      let hi = head;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if ((await time(mid)) < day * DAY) lo = mid;
        else hi = mid - 1;
      }
      closes.push(lo);
    }
    expect(closes.length).toBeGreaterThanOrEqual(5);
    const snaps = await readFamily(bus, config.topicPrefix, 'snapshots');
    expect(snaps.map((s) => s.blockNumber)).toEqual(closes);
    for (const c of closes) expect(stored.has(c), `close ${c}`).toBe(true);

    // Far fewer header reads than blocks: about what the ranges need, nowhere near the ~3,000 blocks.
    const headerReads = counts.get('eth_getBlockByNumber') ?? 0;
    const ranges = counts.get('eth_getLogs') ?? 0;
    expect(headerReads).toBeLessThanOrEqual(6 + 2 * ranges + WINDOW + 4 * closes.length + 2);
    expect(blocks.length).toBeLessThan(100);
    await bus.close();
  }, 90_000);
});
