/**
 * KafkaBus on a real Apache Kafka broker (3.9.1, one KRaft node: test/support/kafka-real.ts), for
 * what librdkafka's mock cluster (test/integration/kafka-bus.test.ts) cannot show: topic creation
 * (CreateTopics), Kafka's own group coordinator with two consumer processes, one SIGKILLed, and
 * the broker restarted under a running subscription.
 */
import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { partitionFor } from '../../bus/partition.ts';
import { idOf, keyed, Received } from '../support/kafka-mock/fixture.ts';
import { realKafkaProblem, useRealKafka } from '../support/kafka-real.ts';

const PARTITIONS = 4;
const TEST_TIMEOUT = 120_000;

const problem = realKafkaProblem();
if (problem) console.warn(`WARNING: the real Kafka broker suite is skipped: ${problem}`);
const suite = problem ? describe.skip : describe;
const suiteName = problem
  ? `KafkaBus on a real Kafka broker skipped: ${problem}`
  : 'KafkaBus on a real Kafka broker (Apache Kafka 3.9.1, KRaft)';

suite(suiteName, () => {
  const fx = useRealKafka({ partitions: PARTITIONS, sessionTimeoutMs: 6_000 });

  async function partitionCounts(topics: string[]): Promise<Record<string, number>> {
    const admin = new kafkajs.Kafka({
      clientId: 'vs-test-admin',
      brokers: fx.kafka().brokers,
      logLevel: kafkajs.logLevel.NOTHING,
    }).admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const present = topics.filter((t) => existing.has(t));
      const { topics: meta } = await admin.fetchTopicMetadata({ topics: present });
      return Object.fromEntries(
        topics.map((t) => [t, meta.find((m) => m.name === t)?.partitions.length ?? 0]),
      );
    } finally {
      await admin.disconnect();
    }
  }

  it(
    'creates a missing topic with the bus partition count on publish and on subscribe (CreateTopics), and refuses a topic of another count',
    async () => {
      const bus = fx.newBus();
      const sent = keyed('vs.created', 200, 20);
      await bus.publish('vs.created', sent);
      const got = new Received();
      const sub = await bus.subscribe({
        groupId: 'g-created',
        topics: ['vs.created', 'vs.created-by-consumer'],
        maxBatchSize: 50,
        maxWaitMs: 50,
        handler: async (batch) => got.record(batch),
      });
      await sub.drained();
      await sub.stop();
      expect(await partitionCounts(['vs.created', 'vs.created-by-consumer'])).toEqual({
        'vs.created': PARTITIONS,
        'vs.created-by-consumer': PARTITIONS,
      });
      expect(got.size).toBe(200);
      expect(got.duplicates()).toEqual([]);
      for (const m of sent)
        expect(got.at.get(idOf(m.value))?.partition).toBe(partitionFor(m.key, PARTITIONS));

      // An operator's topic of another partition count is never written to.
      await fx.kafka().createTopics(['vs.two'], 2);
      await expect(fx.newBus().publish('vs.two', keyed('vs.two', 5, 5))).rejects.toMatchObject({
        code: 'CONFIG_INVALID',
      });
    },
    TEST_TIMEOUT,
  );

  it(
    'drained() waits through a broker SIGKILL and restart mid-stream; every message is handled, the group ends at the high watermarks',
    async () => {
      const bus = fx.newBus();
      const sent = keyed('vs.outage', 600, 30);
      await bus.publish('vs.outage', sent);
      const got = new Received();
      const sub = await bus.subscribe({
        groupId: 'g-outage',
        topics: ['vs.outage'],
        maxBatchSize: 20,
        maxWaitMs: 50,
        handler: async (batch) => {
          got.record(batch);
          await new Promise((r) => setTimeout(r, 60)); // a store insert's time: the drain spans the outage
        },
      });
      const drained = sub.drained();
      const failed = drained.then(
        () => undefined,
        (err: unknown) => err,
      );
      while (got.size < 100) await new Promise((r) => setTimeout(r, 20));
      expect(got.size).toBeLessThan(600); // mid-stream
      await fx.kafka().stop({ hard: true });
      await new Promise((r) => setTimeout(r, 2_000));
      await fx.kafka().start();
      expect(await failed).toBeUndefined();
      await sub.stop();
      // At least once across the outage: a batch whose commit the dead broker never acknowledged comes again.
      expect(got.size).toBe(600);
      expect(await bus.lag('g-outage', ['vs.outage'])).toEqual({ 'vs.outage': [0, 0, 0, 0] });
    },
    TEST_TIMEOUT,
  );
});
