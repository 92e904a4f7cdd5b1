/**
 * KafkaBus against librdkafka's mock cluster (test/support/kafka-broker.ts): delivery,
 * partitioning, commit-after-handler, redelivery after a crash, drained() and lag().
 * A consumer group's first join takes ~3 s on the mock cluster; a join after another member
 * left waits for the mock's rebalance timer (session timeout - 1 s), hence the short session
 * timeout and the generous test timeouts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaBus } from '../../bus/kafka.ts';
import { partitionFor } from '../../bus/partition.ts';
import type { Batch, BusMessage } from '../../bus/types.ts';
import { kafkaToolchainProblem, type MockKafka, startMockKafka } from '../support/kafka-broker.ts';

const PARTITIONS = 4;
const ALL_TOPICS = ['vs.a', 'vs.b', 'vs.c', 'vs.retry', 'vs.crash', 'vs.zombie', 'vs.drain'];
const TEST_TIMEOUT = 90_000;
const SESSION_TIMEOUT_MS = 6_000;

const problem = kafkaToolchainProblem();
const suite = problem ? describe.skip : describe;
const suiteName = problem
  ? `kafka mock broker unavailable: ${problem}`
  : 'KafkaBus on the librdkafka mock cluster';

interface Payload {
  t: string;
  k: string;
  s: number;
}

function message(t: string, k: string, s: number): BusMessage {
  return { key: k, value: Buffer.from(JSON.stringify({ t, k, s })), headers: { 'x-seq': String(s) } };
}

function decode(value: Buffer): Payload {
  return JSON.parse(value.toString('utf8')) as Payload;
}

/** n messages spread over `keys` keys, with a per-key sequence number. */
function keyed(topic: string, n: number, keys: number): BusMessage[] {
  const seq = new Map<string, number>();
  return Array.from({ length: n }, (_, i) => {
    const k = `${topic}-vault-${(i * 7) % keys}`;
    const s = seq.get(k) ?? 0;
    seq.set(k, s + 1);
    return message(topic, k, s);
  });
}

const id = (p: Payload) => `${p.t}|${p.k}|${p.s}`;

suite(suiteName, () => {
  let kafka: MockKafka;
  const buses: KafkaBus[] = [];
  const newBus = (opts: { maxRequestBytes?: number } = {}) => {
    const bus = new KafkaBus({
      brokers: kafka.brokers,
      clientId: 'vaultstream-test',
      partitions: PARTITIONS,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      ...opts,
    });
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    kafka = await startMockKafka({ topics: ALL_TOPICS, partitions: PARTITIONS, brokers: 3 });
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
    await kafka?.stop();
  }, 60_000);

  it(
    'delivers 10,000 keyed messages over 3 topics exactly once, in key order, on partitionFor(key)',
    async () => {
      const topics = ['vs.a', 'vs.b', 'vs.c'];
      // Small requests so publish has to chunk.
      const bus = newBus({ maxRequestBytes: 64 * 1024 });
      await bus.connect();
      const sent = topics.flatMap((t, i) => keyed(t, [3334, 3333, 3333][i], 40));
      expect(sent).toHaveLength(10_000);
      for (const t of topics) {
        const mine = sent.filter((m) => decode(m.value).t === t);
        // Several publish calls per topic, in order.
        for (let i = 0; i < mine.length; i += 1000) await bus.publish(t, mine.slice(i, i + 1000));
      }

      const seen = new Map<string, number>();
      const order = new Map<string, number[]>();
      const badBatches: string[] = [];
      let largest = 0;
      const sub = await bus.subscribe({
        groupId: 'g-all',
        topics,
        maxBatchSize: 64,
        maxWaitMs: 100,
        handler: async (batch: Batch) => {
          const last = batch.messages[batch.messages.length - 1];
          largest = Math.max(largest, batch.messages.length);
          if (batch.messages.length === 0 || batch.messages.length > 64) badBatches.push('size');
          if (batch.nextOffset !== last.offset + 1n) badBatches.push('nextOffset');
          for (const m of batch.messages) {
            const p = decode(m.value);
            if (p.t !== batch.topic || m.key !== p.k || m.headers?.['x-seq'] !== String(p.s))
              badBatches.push('content');
            if (batch.partition !== partitionFor(m.key, PARTITIONS)) badBatches.push(`partition of ${m.key}`);
            seen.set(id(p), (seen.get(id(p)) ?? 0) + 1);
            const list = order.get(`${p.t}|${p.k}`) ?? [];
            list.push(p.s);
            order.set(`${p.t}|${p.k}`, list);
          }
        },
      });
      await sub.drained();
      await sub.stop();

      expect(badBatches).toEqual([]);
      expect(largest).toBe(64); // fetched batches (~200 messages each here) were split at maxBatchSize
      expect(seen.size).toBe(10_000);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
      for (const m of sent) expect(seen.has(id(decode(m.value)))).toBe(true);
      for (const [key, seqs] of order) {
        expect(seqs, key).toEqual(seqs.map((_, i) => i));
      }
      const lag = await bus.lag('g-all', topics);
      for (const t of topics) expect(lag[t]).toEqual([0, 0, 0, 0]);
    },
    TEST_TIMEOUT,
  );

  it(
    'commits only after the handler resolves: a failed batch comes back from its first offset, nothing lost',
    async () => {
      const bus = newBus();
      const sent = keyed('vs.retry', 400, 25);
      await bus.publish('vs.retry', sent);

      const attempts = new Map<string, number>(); // `${partition}@${firstOffset}` -> deliveries
      const failed: string[] = [];
      const errors: string[] = [];
      const stored = new Map<string, number>();
      const sub = await bus.subscribe({
        groupId: 'g-retry',
        topics: ['vs.retry'],
        maxBatchSize: 40,
        maxWaitMs: 100,
        handler: async (batch) => {
          const first = `${batch.partition}@${batch.messages[0].offset}`;
          const n = (attempts.get(first) ?? 0) + 1;
          attempts.set(first, n);
          // The first delivery of the first two batches of every partition fails.
          if (n === 1 && failed.filter((f) => f.startsWith(`${batch.partition}@`)).length < 2) {
            failed.push(first);
            throw new Error(`injected failure at ${first}`);
          }
          for (const m of batch.messages) {
            const k = id(decode(m.value));
            stored.set(k, (stored.get(k) ?? 0) + 1);
          }
        },
        onError: (err, batch) =>
          errors.push(`${batch.partition}@${batch.messages[0].offset}: ${String(err)}`),
      });
      await sub.drained();
      await sub.stop();

      expect(failed.length).toBeGreaterThanOrEqual(PARTITIONS);
      expect(errors).toHaveLength(failed.length);
      for (const f of failed) {
        // Redelivered, starting at the same first offset.
        expect(attempts.get(f), f).toBe(2);
      }
      expect(stored.size).toBe(sent.length);
      expect([...stored.values()].every((n) => n === 1)).toBe(true);
      expect((await bus.lag('g-retry', ['vs.retry']))['vs.retry']).toEqual([0, 0, 0, 0]);
    },
    TEST_TIMEOUT,
  );

  it(
    'after a crash between handling and commit, a new consumer in the group gets the uncommitted messages only',
    async () => {
      const producer = newBus();
      const sent = keyed('vs.crash', 1000, 50);
      await producer.publish('vs.crash', sent);

      // First consumer: stores batches; once 300 messages are stored, the next batch is stored
      // but its handler never returns (the process "dies" before the commit).
      const busA = newBus();
      const committedByA = new Set<string>();
      const hungBatch: string[] = [];
      let crashed!: () => void;
      const crash = new Promise<void>((resolve) => {
        crashed = resolve;
      });
      const subA = await busA.subscribe({
        groupId: 'g-crash',
        topics: ['vs.crash'],
        maxBatchSize: 50,
        maxWaitMs: 100,
        handler: async (batch) => {
          const ids = batch.messages.map((m) => id(decode(m.value)));
          if (committedByA.size >= 300) {
            hungBatch.push(...ids);
            crashed();
            return new Promise<void>(() => {});
          }
          for (const i of ids) committedByA.add(i);
        },
      });
      await crash;
      await subA.abort();
      expect(hungBatch.length).toBeGreaterThan(0);

      // Second consumer, same group, fresh client.
      const busB = newBus();
      const deliveredB = new Map<string, number>();
      const subB = await busB.subscribe({
        groupId: 'g-crash',
        topics: ['vs.crash'],
        maxBatchSize: 50,
        maxWaitMs: 100,
        handler: async (batch) => {
          for (const m of batch.messages) {
            const k = id(decode(m.value));
            deliveredB.set(k, (deliveredB.get(k) ?? 0) + 1);
          }
        },
      });
      await subB.drained();
      await subB.stop();

      for (const k of committedByA) expect(deliveredB.has(k), `committed ${k} redelivered`).toBe(false);
      for (const k of hungBatch) expect(deliveredB.get(k), `uncommitted ${k}`).toBe(1);
      expect([...deliveredB.values()].every((n) => n === 1)).toBe(true);
      expect(committedByA.size + deliveredB.size).toBe(sent.length);
    },
    TEST_TIMEOUT,
  );

  it(
    'a consumer that hangs without leaving is evicted after the session timeout and its late commit is rejected',
    async () => {
      const producer = newBus();
      const sent = keyed('vs.zombie', 600, 40);
      await producer.publish('vs.zombie', sent);

      const busA = newBus();
      const storedByA = new Set<string>();
      const hungBatch: string[] = [];
      let hung!: () => void;
      const hanging = new Promise<void>((resolve) => {
        hung = resolve;
      });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let lateReturn!: () => void;
      const returned = new Promise<void>((resolve) => {
        lateReturn = resolve;
      });
      const subA = await busA.subscribe({
        groupId: 'g-zombie',
        topics: ['vs.zombie'],
        maxBatchSize: 50,
        maxWaitMs: 100,
        handler: async (batch) => {
          if (storedByA.size >= 200 && hungBatch.length === 0) {
            hungBatch.push(...batch.messages.map((m) => id(decode(m.value))));
            hung();
            await gate; // no heartbeats meanwhile: the coordinator evicts this member
            lateReturn();
            return;
          }
          // Batches a zombie handles after its eviction are not counted as stored-and-committed.
          if (hungBatch.length === 0) for (const m of batch.messages) storedByA.add(id(decode(m.value)));
        },
      });
      await hanging;

      const busB = newBus();
      const deliveredB = new Map<string, number>();
      const subB = await busB.subscribe({
        groupId: 'g-zombie',
        topics: ['vs.zombie'],
        maxBatchSize: 50,
        maxWaitMs: 100,
        handler: async (batch) => {
          for (const m of batch.messages) {
            const k = id(decode(m.value));
            deliveredB.set(k, (deliveredB.get(k) ?? 0) + 1);
          }
        },
      });
      await subB.drained();
      for (const k of storedByA) expect(deliveredB.has(k), `committed ${k} redelivered`).toBe(false);
      for (const k of hungBatch) expect(deliveredB.get(k), `uncommitted ${k}`).toBe(1);
      expect(storedByA.size + deliveredB.size).toBe(sent.length);
      expect(await producer.lag('g-zombie', ['vs.zombie'])).toEqual({ 'vs.zombie': [0, 0, 0, 0] });

      // The zombie finishes its batch; its commit (stale member) must not move the group's offsets back.
      release();
      await returned;
      await new Promise((r) => setTimeout(r, 1500));
      expect(await producer.lag('g-zombie', ['vs.zombie'])).toEqual({ 'vs.zombie': [0, 0, 0, 0] });
      await Promise.all([subA.stop(), subB.stop()]);
    },
    TEST_TIMEOUT,
  );

  it(
    'lag() reports unconsumed messages per partition and drained() waits for the commits',
    async () => {
      const bus = newBus();
      const first = keyed('vs.drain', 400, 30);
      await bus.publish('vs.drain', first);
      const perPartition = (msgs: BusMessage[]) => {
        const counts = Array<number>(PARTITIONS).fill(0);
        for (const m of msgs) counts[partitionFor(m.key, PARTITIONS)]++;
        return counts;
      };

      // Nothing committed yet: lag is the whole partition.
      expect(await bus.lag('g-drain', ['vs.drain'])).toEqual({ 'vs.drain': perPartition(first) });

      let open!: () => void;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      let handled = 0;
      const sub = await bus.subscribe({
        groupId: 'g-drain',
        topics: ['vs.drain'],
        maxBatchSize: 100,
        maxWaitMs: 100,
        handler: async (batch) => {
          await gate;
          handled += batch.messages.length;
        },
      });
      let drained = false;
      const waiting = sub.drained().then(() => {
        drained = true;
      });
      await new Promise((r) => setTimeout(r, 1500));
      expect(drained).toBe(false);
      expect(handled).toBe(0);
      open();
      await waiting;
      expect(handled).toBe(400);
      expect(await bus.lag('g-drain', ['vs.drain'])).toEqual({ 'vs.drain': [0, 0, 0, 0] });
      await sub.drained(); // nothing new: resolves at once

      await sub.stop();
      const more = keyed('vs.drain', 40, 30);
      await bus.publish('vs.drain', more);
      expect(await bus.lag('g-drain', ['vs.drain'])).toEqual({ 'vs.drain': perPartition(more) });
      await expect(sub.drained()).rejects.toThrow(/stopped before it drained/);
    },
    TEST_TIMEOUT,
  );
});
