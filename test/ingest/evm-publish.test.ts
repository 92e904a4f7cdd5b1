/**
 * The EVM ingester's publisher (ingest/evm/publish.ts) on the real in-process bus: the block
 * headers of a range go last, once every record family is durable, whatever order the records
 * come in (a retraction lists a block before its events' families), so the chain's watermark
 * never moves past records that are not on the bus.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { topicName } from '../../bus/partition.ts';
import type { Emitted } from '../../ingest/evm/map-context.ts';
import { blockEmitted, emittedPublisher } from '../../ingest/evm/publish.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { openBus, readFamily } from './evm-support.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-evm-publish-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const PREFIX = 'vs.';
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;

const transfer = (n: number): Emitted => ({
  family: 'transfers',
  record: {
    chainId: 1,
    blockNumber: n,
    blockHash: hash(n),
    blockTimestamp: 1_700_000_000 + n,
    txHash: hash(1000 + n),
    logIndex: 0,
    removed: false,
    vault: 'v',
    token: `0x${'ab'.repeat(20)}`,
    from: `0x${'00'.repeat(20)}`,
    to: `0x${'cd'.repeat(20)}`,
    amount: '123456789012345678901234567890',
    transactionIndex: 0,
  },
});
const header = (n: number) =>
  blockEmitted(1, { number: n, hash: hash(n), parentHash: hash(n - 1), timestamp: 1_700_000_000 + n });

describe('EVM publisher', () => {
  it('publishes the block headers only once every record family is durable', async () => {
    const dir = join(root, 'bus');
    const bus = await openBus(dir);
    const publish = emittedPublisher(bus, new EventCodec(), PREFIX);
    // The transfers topic cannot be written: a file where its directory goes.
    const broken = join(dir, topicName(PREFIX, 'transfers'));
    writeFileSync(broken, 'not a directory');
    // A block first, as a retraction lists them (the newest orphaned block before older events).
    const items = [header(7), transfer(7), transfer(8), header(8)];
    await expect(publish(items)).rejects.toMatchObject({ code: 'BUS_UNAVAILABLE' });
    expect(await readFamily(bus, PREFIX, 'blocks')).toEqual([]);

    // Once the topic can be written, the same call publishes everything, headers in their order.
    rmSync(broken);
    await publish(items);
    expect((await readFamily(bus, PREFIX, 'transfers')).map((r) => [r.blockNumber, r.amount])).toEqual([
      [7, '123456789012345678901234567890'],
      [8, '123456789012345678901234567890'],
    ]);
    expect((await readFamily(bus, PREFIX, 'blocks')).map((r) => r.blockNumber)).toEqual([7, 8]);
    await bus.close();
  });
});
