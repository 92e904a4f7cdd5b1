/**
 * KafkaBus on a real Apache Kafka broker (3.9.1 unless VAULTSTREAM_KAFKA_VERSION says otherwise; one KRaft node: test/support/kafka-real.ts), for
 * what librdkafka's mock cluster (test/integration/kafka-bus.test.ts) cannot show: topic creation
 * (CreateTopics), Kafka's own group coordinator with two consumer processes, one SIGKILLed, and
 * the broker restarted under a running subscription.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionFor } from '../../bus/partition.ts';
import { idOf, keyed, Received } from '../support/kafka-mock/fixture.ts';
import { realKafkaProblem, realKafkaVersion, useRealKafka } from '../support/kafka-real.ts';

const PARTITIONS = 4;
const TEST_TIMEOUT = 120_000;
const CONSUMER = join(import.meta.dirname, '..', 'support', 'kafka-real-consumer.ts');

const problem = realKafkaProblem();
if (problem) console.warn(`WARNING: the real Kafka broker suite is skipped: ${problem}`);
const suite = problem ? describe.skip : describe;
const suiteName = problem
  ? `KafkaBus on a real Kafka broker skipped: ${problem}`
  : `KafkaBus on a real Kafka broker (Apache Kafka ${realKafkaVersion()}, KRaft)`;

suite(suiteName, () => {
  const fx = useRealKafka({ partitions: PARTITIONS, sessionTimeoutMs: 6_000 });
  // Made in beforeAll: a skipped suite's body still runs, and would leave the directory behind.
  let dir = '';
  const children: ChildProcess[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'vs-kafka-group-'));
  });
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A consumer process (test/support/kafka-real-consumer.ts) in `groupId`, storing to its own file. */
  function startConsumer(groupId: string, topic: string, name: string) {
    const out = join(dir, `${groupId}-${name}.log`);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CONSUMER, fx.kafka().brokers.join(','), groupId, topic, String(PARTITIONS), out],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const joined = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => String(d).includes('joined') && resolve());
      child.once('exit', (code) => reject(new Error(`consumer ${name} exited (${code}): ${stderr}`)));
    });
    return { child, out, joined, exited };
  }

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
    "publishes 6 MB in one call in sends below the broker's message.max.bytes (1 MB), every message delivered once",
    async () => {
      const topic = 'vs.large';
      const bus = fx.newBus();
      const pad = 'x'.repeat(20_000);
      const sent = keyed(topic, 300, 30).map((m) => ({ ...m, headers: { ...m.headers, pad } }));
      await bus.publish(topic, sent);
      const got = new Received();
      const sub = await bus.subscribe({
        groupId: 'g-large',
        topics: [topic],
        maxBatchSize: 100,
        maxWaitMs: 50,
        handler: async (batch) => got.record(batch),
      });
      await sub.drained();
      await sub.stop();
      expect(got.size).toBe(300);
      expect(got.duplicates()).toEqual([]);
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

  it(
    'publishes through a broker SIGKILL and restart: a failed send is a retryable BUS_UNAVAILABLE, every acknowledged message is delivered',
    async () => {
      const topic = 'vs.publish-outage';
      const bus = fx.newBus();
      const sent = keyed(topic, 3_000, 30);
      const acked: typeof sent = [];
      const failures: unknown[] = [];
      let restarted: Promise<void> | undefined;
      for (let i = 0; i < sent.length; i += 50) {
        const chunk = sent.slice(i, i + 50);
        // Mid-stream the broker dies without a controlled shutdown; it comes back once a send
        // failed (kafkajs's own retries spent), so the caller sees the outage.
        if (i === 1_000) await fx.kafka().stop({ hard: true });
        // As a caller does (an ingester's next round): retry what failed until it is acknowledged.
        for (;;) {
          try {
            await bus.publish(topic, chunk);
            break;
          } catch (err) {
            failures.push(err);
            expect(err).toMatchObject({ code: 'BUS_UNAVAILABLE', retryable: true });
            restarted ??= fx.kafka().start();
          }
        }
        acked.push(...chunk);
      }
      expect(failures.length).toBeGreaterThan(0);
      await restarted;
      const got = new Received();
      const sub = await bus.subscribe({
        groupId: 'g-publish-outage',
        topics: [topic],
        maxBatchSize: 200,
        maxWaitMs: 50,
        handler: async (batch) => got.record(batch),
      });
      await sub.drained();
      await sub.stop();
      expect(acked).toHaveLength(3_000);
      expect(acked.filter((m) => !got.has(idOf(m.value)))).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'two consumer processes in one group split the partitions; one SIGKILLed, the survivor takes them over from the committed offsets: nothing lost, only the killed batch in flight handled twice',
    async () => {
      const topic = 'vs.group';
      const bus = fx.newBus();
      await bus.publish(topic, keyed(topic, 100, 40)); // creates the topic before the consumers join
      const a = startConsumer('g-two', topic, 'a');
      const b = startConsumer('g-two', topic, 'b');
      await Promise.all([a.joined, b.joined]);

      // A steady stream while the group works: 40 sends of 100 messages, 50 ms apart.
      const sent = keyed(topic, 4_100, 40);
      const publishing = (async () => {
        for (let i = 100; i < sent.length; i += 100) {
          await bus.publish(topic, sent.slice(i, i + 100));
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      // Both members hold partitions and handle some of the stream before one dies (the first 100
      // messages went to A alone, before B joined and the group rebalanced).
      const streamed = new Set(sent.slice(100).map((m) => idOf(m.value)));
      const ofStream = (file: string) => handled(file).filter((r) => streamed.has(r.id));
      await waitFor(() => ofStream(a.out).length >= 100 && ofStream(b.out).length >= 100, 60_000);
      const aBefore = new Set(ofStream(a.out).map((r) => r.partition));
      const bBefore = new Set(ofStream(b.out).map((r) => r.partition));
      expect(aBefore.size + bBefore.size).toBe(PARTITIONS);
      expect([...aBefore].filter((p) => bBefore.has(p))).toEqual([]);
      a.child.kill('SIGKILL');
      await a.exited;
      await publishing;

      // The survivor drains everything, the dead member's partitions included.
      await waitFor(
        async () =>
          Object.values(await bus.lag('g-two', [topic]))
            .flat()
            .every((l) => l === 0),
        90_000,
      );
      b.child.kill('SIGTERM');
      await b.exited;

      const ra = handled(a.out);
      const rb = handled(b.out);
      expect(new Set(rb.map((r) => r.partition)).size).toBe(PARTITIONS); // took over A's partitions
      // Nothing lost.
      const all = new Set([...ra, ...rb].map((r) => r.id));
      expect(sent.filter((m) => !all.has(idOf(m.value)))).toEqual([]);
      // Neither process handled a message twice; a message handled by both is one A handled last
      // on its partition (a batch whose commit its death cut off), at most one batch per partition.
      expect(ra.length).toBe(new Set(ra.map((r) => r.id)).size);
      expect(rb.length).toBe(new Set(rb.map((r) => r.id)).size);
      const inB = new Set(rb.map((r) => r.id));
      for (let p = 0; p < PARTITIONS; p++) {
        const aOffsets = ra.filter((r) => r.partition === p).map((r) => r.offset);
        const twice = ra.filter((r) => r.partition === p && inB.has(r.id)).map((r) => r.offset);
        expect(twice.length, `partition ${p}`).toBeLessThanOrEqual(25);
        expect(twice, `partition ${p}`).toEqual(aOffsets.slice(aOffsets.length - twice.length));
      }
    },
    TEST_TIMEOUT,
  );
});

interface Handled {
  partition: number;
  offset: bigint;
  id: string;
}

/** What a consumer process stored, in the order it stored it. */
function handled(file: string): Handled[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [partition, offset, id] = line.split(' ');
      return { partition: Number(partition), offset: BigInt(offset), id };
    });
}

async function waitFor(ok: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
