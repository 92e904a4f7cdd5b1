/**
 * The shared setup of the Kafka bus tests: one mock cluster per test file (started before its
 * tests, stopped after them with every bus made through it), keyed test messages, and a record
 * of what a consumer received, with each message's partition and offset.
 */
import { afterAll, beforeAll } from 'vitest';
import { KafkaBus, type KafkaBusOptions } from '../../../bus/kafka.ts';
import { partitionFor } from '../../../bus/partition.ts';
import type { Batch, BusMessage } from '../../../bus/types.ts';
import { type MockKafka, startMockKafka } from '../kafka-broker.ts';

/** What a test message carries: its topic, key and per-key sequence number. */
export interface Payload {
  t: string;
  k: string;
  s: number;
}

/** A message whose value and `x-seq` header identify it. */
export function message(t: string, k: string, s: number): BusMessage {
  return { key: k, value: Buffer.from(JSON.stringify({ t, k, s })), headers: { 'x-seq': String(s) } };
}

export function decode(value: Buffer): Payload {
  return JSON.parse(value.toString('utf8')) as Payload;
}

/** A message's identity across deliveries. */
export const idOf = (value: Buffer): string => {
  const p = decode(value);
  return `${p.t}|${p.k}|${p.s}`;
};

/** n messages spread over `keys` keys, with a per-key sequence number. */
export function keyed(topic: string, n: number, keys: number): BusMessage[] {
  const seq = new Map<string, number>();
  return Array.from({ length: n }, (_, i) => {
    const k = `${topic}-vault-${(i * 7) % keys}`;
    const s = seq.get(k) ?? 0;
    seq.set(k, s + 1);
    return message(topic, k, s);
  });
}

/** Messages per partition, by `partitionFor` (on a fresh topic: each partition's end offset). */
export function perPartition(msgs: BusMessage[], partitions: number): number[] {
  const counts = Array<number>(partitions).fill(0);
  for (const m of msgs) counts[partitionFor(m.key, partitions)]++;
  return counts;
}

/** A promise with its resolver, for handlers that signal or wait on the test. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Every message a consumer was handed: how many times, and where (the last delivery). */
export class Received {
  readonly count = new Map<string, number>();
  readonly at = new Map<string, { partition: number; offset: bigint }>();
  readonly sizes: number[] = [];

  record(batch: Batch): void {
    this.sizes.push(batch.messages.length);
    for (const m of batch.messages) {
      const id = idOf(m.value);
      this.count.set(id, (this.count.get(id) ?? 0) + 1);
      this.at.set(id, { partition: batch.partition, offset: m.offset });
    }
  }

  get size(): number {
    return this.count.size;
  }

  has(id: string): boolean {
    return this.count.has(id);
  }

  /** Ids handed over more than once. */
  duplicates(): string[] {
    return [...this.count].filter(([, n]) => n !== 1).map(([id]) => id);
  }

  /** Offsets received per partition, ascending. */
  offsets(partitions: number): bigint[][] {
    const out = Array.from({ length: partitions }, () => [] as bigint[]);
    for (const { partition, offset } of this.at.values()) out[partition].push(offset);
    for (const list of out) list.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return out;
  }
}

export interface MockKafkaFixture {
  /** A bus on the file's mock cluster, closed after the file's tests. */
  newBus(opts?: Pick<KafkaBusOptions, 'maxRequestBytes'>): KafkaBus;
}

/**
 * Registers beforeAll/afterAll hooks that start a mock cluster with `topics` pre-created and tear
 * it down with every bus made through the returned fixture.
 */
export function useMockKafka(opts: {
  topics: string[];
  partitions: number;
  brokers: number;
  sessionTimeoutMs: number;
}): MockKafkaFixture {
  let kafka: MockKafka | undefined;
  const buses: KafkaBus[] = [];
  beforeAll(async () => {
    kafka = await startMockKafka({ topics: opts.topics, partitions: opts.partitions, brokers: opts.brokers });
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
    await kafka?.stop();
  }, 60_000);
  return {
    newBus(extra = {}) {
      if (!kafka) throw new Error('the mock cluster is not started (newBus outside a test?)');
      const bus = new KafkaBus({
        brokers: kafka.brokers,
        clientId: 'vaultstream-test',
        partitions: opts.partitions,
        sessionTimeoutMs: opts.sessionTimeoutMs,
        ...extra,
      });
      buses.push(bus);
      return bus;
    },
  };
}
