/**
 * The in-process bus: durable log files, Kafka's partitioning, commit only after the
 * handler, redelivery of uncommitted batches to a new subscription, torn-write safety.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InProcessBus } from '../../bus/inprocess.ts';
import { partitionFor } from '../../bus/partition.ts';
import type { Batch } from '../../bus/types.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-bus-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function fresh(name: string) {
  return new InProcessBus({ dir: join(root, name), partitions: 4 });
}

const msgs = (n: number, prefix = 'k') =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i % 37}`, value: Buffer.from(`v${i}`) }));

describe('in-process bus', () => {
  it('delivers every message once, per-key in order, on the Kafka partition of its key', async () => {
    const bus = fresh('a');
    await bus.connect();
    await bus.publish('t1', msgs(5000));
    await bus.publish('t2', msgs(100, 'x'));
    const seen: { topic: string; partition: number; key: string; value: string }[] = [];
    const sub = await bus.subscribe({
      groupId: 'g',
      topics: ['t1', 't2'],
      maxBatchSize: 333,
      maxWaitMs: 0,
      handler: async (b: Batch) => {
        expect(b.messages.length).toBeLessThanOrEqual(333);
        for (const m of b.messages)
          seen.push({ topic: b.topic, partition: b.partition, key: m.key, value: m.value.toString() });
      },
    });
    await sub.drained();
    await sub.stop();
    expect(seen).toHaveLength(5100);
    for (const s of seen) expect(s.partition).toBe(partitionFor(s.key, 4));
    const t1 = seen.filter((s) => s.topic === 't1');
    expect(new Set(t1.map((s) => s.value)).size).toBe(5000);
    const byKey = new Map<string, number[]>();
    for (const s of t1) byKey.set(s.key, [...(byKey.get(s.key) ?? []), Number(s.value.slice(1))]);
    for (const list of byKey.values()) expect(list).toEqual([...list].sort((a, b) => a - b));
    expect(await bus.lag('g', ['t1', 't2'])).toEqual({ t1: [0, 0, 0, 0], t2: [0, 0, 0, 0] });
    await bus.close();
  });

  it('redelivers a batch whose handler failed, from its first offset', async () => {
    const bus = fresh('b');
    await bus.connect();
    await bus.publish('t', msgs(50));
    const firstOffsets: bigint[] = [];
    let failed = false;
    let total = 0;
    const sub = await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      maxBatchSize: 1000,
      maxWaitMs: 0,
      handler: async (b) => {
        firstOffsets.push(b.messages[0].offset);
        if (!failed) {
          failed = true;
          throw new Error('store down');
        }
        total += b.messages.length;
      },
    });
    await sub.drained();
    await sub.stop();
    expect(firstOffsets[0]).toBe(firstOffsets[1]);
    expect(total).toBe(50);
    await bus.close();
  });

  it('gives a new subscription of the group only what was not committed', async () => {
    const dir = 'c';
    const bus = fresh(dir);
    await bus.connect();
    await bus.publish('t', msgs(20));
    const sub = await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      maxBatchSize: 1000,
      maxWaitMs: 0,
      handler: async () => {},
    });
    await sub.drained();
    await sub.stop();
    await bus.publish('t', msgs(7, 'late'));
    await bus.close();
    // A "restarted process": a new bus object on the same directory.
    const again = fresh(dir);
    await again.connect();
    const got: string[] = [];
    const sub2 = await again.subscribe({
      groupId: 'g',
      topics: ['t'],
      maxBatchSize: 1000,
      maxWaitMs: 0,
      handler: async (b) => {
        for (const m of b.messages) got.push(m.key);
      },
    });
    await sub2.drained();
    await sub2.stop();
    expect(got.sort()).toEqual(
      msgs(7, 'late')
        .map((m) => m.key)
        .sort(),
    );
    // Another group starts from the beginning.
    expect(
      Object.values(await again.lag('other', ['t']))
        .flat()
        .reduce((a, b) => a + b, 0),
    ).toBeGreaterThan(0);
    await again.close();
  });

  it('fills a waiting batch by reading on from where it stopped, each record once', async () => {
    const bus = new InProcessBus({ dir: join(root, 'fill'), partitions: 1 });
    await bus.connect();
    const batches: string[][] = [];
    const sub = await bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      maxBatchSize: 100_000,
      maxWaitMs: 1_500,
      handler: async (b) => {
        batches.push(b.messages.map((m) => m.value.toString()));
      },
    });
    // 40 publishes while the first batch waits to fill: each wakes the subscription.
    for (let k = 0; k < 40; k++) {
      await bus.publish(
        't',
        Array.from({ length: 250 }, (_, i) => ({ key: 'k', value: Buffer.from(`v${k * 250 + i}`) })),
      );
      await new Promise((r) => setTimeout(r, 5));
    }
    await sub.drained();
    await sub.stop();
    const got = batches.flat();
    expect(got).toEqual(Array.from({ length: 10_000 }, (_, i) => `v${i}`));
    // Reading the batch again from its start at each wake read ~200,000 records.
    expect(sub.recordsRead).toBe(10_000);
    await bus.close();
  });
});
