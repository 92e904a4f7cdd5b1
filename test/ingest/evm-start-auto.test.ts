/**
 * `startBlock: auto` on a real anvil: two watched contracts deployed at known blocks after 200
 * empty ones; the follower finds the earlier deployment block by a binary search over eth_getCode
 * (about log2(head) calls per contract, counted on the wire), keeps it in the checkpoint, reads
 * every event from there, and a restart does not search again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { deployEmitter } from '../../devnet/emitter.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import {
  addr,
  anvilRpc,
  emitTransfers,
  openBus,
  readFamily,
  testConfig,
  untilCaughtUp,
  useAnvilNode,
} from './evm-support.ts';

const chain = useAnvilNode('vs-evm-start-auto-');

describe('startBlock: auto', () => {
  it('starts at the earliest deployment block of the watched contracts, found over eth_getCode', async () => {
    const url = chain.node.rpcUrl;
    // Not viem's getBlockNumber: it caches the answer for seconds.
    const blockNumber = async () => Number(await anvilRpc<string>(url, 'eth_blockNumber'));
    await anvilRpc(url, 'anvil_mine', ['0xc8']);
    const share = await deployEmitter(url);
    const shareBlock = await blockNumber();
    await anvilRpc(url, 'anvil_mine', ['0x32']);
    const teller = await deployEmitter(url);
    const tellerBlock = await blockNumber();
    await emitTransfers(url, share, addr(0), addr(0xa11ce), 1n, 3);
    await anvilRpc(url, 'anvil_mine', ['0x5']);
    const head = await blockNumber();
    expect([shareBlock, tellerBlock]).toEqual([201, 252]);

    const counts = new Map<string, number>();
    const fetchCounting: typeof fetch = (input, init) => {
      const body = JSON.parse(String(init?.body ?? '{}'));
      for (const c of Array.isArray(body) ? body : [body])
        counts.set(c.method, (counts.get(c.method) ?? 0) + 1);
      return fetch(input, init);
    };
    const dataDir = join(chain.root, 'auto');
    const config = testConfig({
      rpcUrls: [url],
      dataDir,
      chain: { startBlock: 'auto' },
      vault: { vaultAddress: share, tellerContractAddress: teller },
    });
    const bus = await openBus(join(dataDir, 'bus'));
    const run = () =>
      startEvmIngest({
        config,
        bus,
        codec: new EventCodec(),
        log: silentLogger,
        rpc: { fetch: fetchCounting },
      });
    let ingest = run();
    await untilCaughtUp(ingest, head, 30_000, 'the backfill');
    await ingest.stop();

    const checkpoint = JSON.parse(readFileSync(join(dataDir, 'ingest', 'evm-31337.json'), 'utf8'));
    expect(checkpoint.startBlock).toBe(shareBlock);
    // Both deployed contracts searched (the placeholders without code cost one call each).
    const searches = counts.get('eth_getCode') ?? 0;
    const perContract = Math.ceil(Math.log2(head + 1)) + 1;
    expect(searches).toBeGreaterThanOrEqual(2 * (perContract - 2));
    expect(searches).toBeLessThanOrEqual(2 * perContract + config.chains.length * 10);
    // Nothing read below the start; every transfer read.
    const blocks = await readFamily(bus, config.topicPrefix, 'blocks');
    expect(Math.min(...blocks.map((b) => b.blockNumber as number))).toBe(shareBlock);
    expect(await readFamily(bus, config.topicPrefix, 'transfers')).toHaveLength(3);
    expect(ingest.progress()[0].blocksTotal).toBe(head - shareBlock + 1);

    // A restart resumes from the checkpoint: no search again.
    counts.clear();
    await anvilRpc(url, 'anvil_mine', ['0x2']);
    ingest = run();
    await untilCaughtUp(ingest, head + 2, 30_000, 'the restart');
    await ingest.stop();
    expect(counts.get('eth_getCode') ?? 0).toBe(0);
    await bus.close();
  }, 60_000);
});
