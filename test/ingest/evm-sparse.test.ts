/**
 * A sparse chain on a real anvil: about 3,000 blocks over six UTC days, transfers in six of
 * them. The follower reads only the headers it needs (range-headers.ts): each range's first and
 * last block, the reorg window below the head, the last block of each UTC day (found by a search
 * on timestamps), where it takes the day's snapshot, and each block holding a transfer, unless its
 * logs carry the block's timestamp (anvil's do; a second run strips them from the answers, as a
 * provider without them). The node's own answers are the truth; the header reads are counted on
 * the wire.
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

/**
 * Counts the JSON-RPC calls of each method that go through `fetch` (batches item by item) and
 * the blocks whose header is read; `strip`: the logs answered lose their `blockTimestamp`.
 */
function countingFetch(counts: Map<string, number>, headersRead: Set<number>, strip: boolean): typeof fetch {
  return async (input, init) => {
    const body = JSON.parse(String(init?.body ?? '{}'));
    for (const c of Array.isArray(body) ? body : [body]) {
      counts.set(c.method, (counts.get(c.method) ?? 0) + 1);
      if (c.method === 'eth_getBlockByNumber') headersRead.add(Number(c.params[0]));
    }
    const res = await fetch(input, init);
    if (!strip || Array.isArray(body) || body.method !== 'eth_getLogs') return res;
    const answer = await res.json();
    for (const log of answer.result ?? []) delete log.blockTimestamp;
    return new Response(JSON.stringify(answer), { status: res.status, headers: res.headers });
  };
}

describe('EVM follower on a sparse chain', () => {
  for (const logTimestamps of [true, false])
    it(`reads the headers of ${logTimestamps ? '' : 'event blocks, '}range ends, the window and day closes only (logs ${logTimestamps ? 'with' : 'without'} blockTimestamp)`, async () => {
      await sparseBackfill(logTimestamps);
    }, 90_000);
});

async function sparseBackfill(logTimestamps: boolean): Promise<void> {
  const { node, emitter } = chain;
  const url = node.rpcUrl;
  const pub = createPublicClient({ transport: http(url) });
  const start = Number(await pub.getBlockNumber({ cacheTime: 0 })) + 1;
  // 6 x (499 empty blocks 173 s apart, then a block of 2 transfers): about six days.
  for (let i = 0; i < 6; i++) {
    await anvilRpc(url, 'anvil_mine', ['0x1f3', '0xad']);
    await emitTransfers(url, emitter, addr(0), addr(0xa11ce + i), BigInt(10 * i + 1), 2);
  }
  await anvilRpc(url, 'anvil_mine', ['0x14', '0xad']);
  // Uncached: viem answers a block number it read in the last 4 s, and mining can take less.
  const head = Number(await pub.getBlockNumber({ cacheTime: 0 }));
  const dataDir = join(chain.root, `sparse-${logTimestamps}`);
  const config = testConfig({
    rpcUrls: [url],
    dataDir,
    chain: { startBlock: start, reorgWindow: WINDOW, maxBlockRange: 100_000 },
    vault: { vaultAddress: emitter },
    ingest: { snapshotIntervalSeconds: DAY },
  });
  const bus = await openBus(join(dataDir, 'bus'));
  const counts = new Map<string, number>();
  const headersRead = new Set<number>();
  // A clock at 0 keeps the periodic snapshot from firing: only the days' closes are read.
  const ingest = startEvmIngest({
    config,
    bus,
    codec: new EventCodec(),
    log: silentLogger,
    clock: () => 0,
    rpc: { fetch: countingFetch(counts, headersRead, !logTimestamps) },
  });
  await untilCaughtUp(ingest, head, 30_000, 'the backfill');
  await ingest.stop();
  // /status shows what the backfill cost: the calls by method, as they went over the wire.
  expect(ingest.progress()[0].rpcCalls).toEqual(Object.fromEntries(counts));

  const transfers = await readFamily(bus, config.topicPrefix, 'transfers');
  expect(transfers).toHaveLength(12);
  const time = async (n: number) => Number((await pub.getBlock({ blockNumber: BigInt(n) })).timestamp);
  // Each transfer's time is its block's, whether the header was read or not.
  for (const t of transfers) expect(t.blockTimestamp).toBe(await time(t.blockNumber as number));
  const blocks = liveEvents(await readFamily(bus, config.topicPrefix, 'blocks'), (b) => `${b.blockNumber}`);
  const stored = new Map(blocks.map((b) => [b.blockNumber as number, b]));
  // Each stored header is the chain's, and only headers read are stored.
  for (const b of blocks) {
    const h = await pub.getBlock({ blockNumber: BigInt(b.blockNumber as number) });
    expect([b.blockHash, b.parentHash, b.blockTimestamp]).toEqual([
      h.hash,
      h.parentHash,
      Number(h.timestamp),
    ]);
    expect(headersRead.has(b.blockNumber as number), `block ${b.blockNumber} read`).toBe(true);
  }
  // The first and the head, and the whole window below the head.
  expect(stored.has(start)).toBe(true);
  for (let n = head - WINDOW + 1; n <= head; n++) expect(stored.has(n), `window block ${n}`).toBe(true);
  // A block holding a transfer: its header is read only when its logs lack the block's timestamp.
  const transferBlocks = new Set(transfers.map((t) => t.blockNumber as number));
  for (const n of transferBlocks) expect(headersRead.has(n), `transfer block ${n}`).toBe(!logTimestamps);

  // The day closes: for each UTC day ending between the start and the head, the day's last block
  // (the newest with a timestamp before midnight) holds the day's snapshot, and its header unless
  // it is known from its logs.
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
  for (const c of closes) expect(stored.has(c) || transferBlocks.has(c), `close ${c}`).toBe(true);

  // Far fewer header reads than blocks: about what the ranges need, nowhere near the ~3,000 blocks.
  const headerReads = counts.get('eth_getBlockByNumber') ?? 0;
  const ranges = counts.get('eth_getLogs') ?? 0;
  const perEvent = logTimestamps ? 0 : 6;
  expect(headerReads).toBeLessThanOrEqual(perEvent + 2 * ranges + WINDOW + 4 * closes.length + 2);
  expect(blocks.length).toBeLessThan(100);
  await bus.close();
}
