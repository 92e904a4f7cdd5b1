/**
 * The Kafka implementation of the bus contract (bus/types.ts), on kafkajs.
 * Producer: acks=-1, murmur2 key partitioning (same as `partitionFor`), no compression,
 * sends chunked below the broker's message size limit. Topics are created on first use with the
 * configured partition count (KafkaBus.ensureTopics). Consumer: one kafkajs consumer per
 * subscription (bus/kafka-subscription.ts), accumulating each partition's messages across fetches
 * into batches, offsets committed explicitly after the handler resolves.
 */
import type { Admin, Kafka as KafkaClient, LogEntry, Producer } from 'kafkajs';
import kafkajs from 'kafkajs';
import { VaultstreamError } from '../core/errors.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import { busError } from './kafka-errors.ts';
import { KafkaSubscription, MAX_FETCH_WAIT_MS } from './kafka-subscription.ts';
import type { Bus, BusMessage, SubscribeOptions } from './types.ts';

const { CompressionTypes, Kafka, logLevel, Partitioners } = kafkajs;

/** Below Kafka's default message.max.bytes (1,048,588), leaving room for batch framing. */
const DEFAULT_MAX_REQUEST_BYTES = 900_000;
const PER_MESSAGE_OVERHEAD = 64;
const CLOSE_GRACE_MS = 30_000;
/** How long a created topic's partitions may take to get serving leaders. */
const LEADER_WAIT_MS = 30_000;

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  /** Partitions per topic; publish checks each topic has exactly this many. */
  partitions: number;
  logger?: Logger;
  /** Upper bound on the bytes of one produce request; default 900,000. */
  maxRequestBytes?: number;
  /**
   * Consumer group session timeout, default 30 s: a consumer whose handler runs longer than this
   * is evicted from the group (its partitions go to another member and the batch is redelivered).
   */
  sessionTimeoutMs?: number;
}

/**
 * kafkajs log entries into pino. Routine rebalance notices go to info; error responses the
 * client retries by itself (logged by its Connection) to warn. Real failures reach callers as errors.
 */
function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _ts, logger: _name, ...extra } = log;
      const routine = /rebalanc|re-joining/i.test(`${message} ${extra.error ?? ''}`);
      let method: 'error' | 'warn' | 'info' = level === logLevel.ERROR ? 'error' : 'warn';
      if (routine) method = 'info';
      else if (method === 'error' && namespace === 'Connection') method = 'warn';
      logger[method]({ kafkajs: namespace, ...extra }, message);
    };
}

/** Splits messages into sends of at most `maxBytes` (a larger single message goes alone). */
function chunkBySize(messages: BusMessage[], maxBytes: number): BusMessage[][] {
  const chunks: BusMessage[][] = [];
  let chunk: BusMessage[] = [];
  let bytes = 0;
  for (const m of messages) {
    let size = Buffer.byteLength(m.key) + m.value.length + PER_MESSAGE_OVERHEAD;
    for (const [k, v] of Object.entries(m.headers ?? {}))
      size += Buffer.byteLength(k) + Buffer.byteLength(v) + 8;
    if (chunk.length > 0 && bytes + size > maxBytes) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(m);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** The bus on a Kafka cluster (see the module comment for the delivery guarantees). */
export class KafkaBus implements Bus {
  readonly kind = 'kafka' as const;
  readonly partitions: number;
  readonly lagUnit = 'messages' as const;
  private readonly kafka: KafkaClient;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly logger: Logger;
  private readonly maxRequestBytes: number;
  private readonly sessionTimeoutMs: number;
  private readonly checkedTopics = new Set<string>();
  private readonly subscriptions = new Set<KafkaSubscription>();
  private connecting?: Promise<void>;

  constructor(opts: KafkaBusOptions) {
    this.partitions = opts.partitions;
    this.logger = opts.logger ?? silentLogger;
    this.maxRequestBytes = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    this.sessionTimeoutMs = opts.sessionTimeoutMs ?? 30_000;
    this.kafka = new Kafka({
      brokers: opts.brokers,
      clientId: opts.clientId,
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(this.logger),
    });
    this.producer = this.kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
      idempotent: false,
      maxInFlightRequests: 1, // keeps per-partition order across retries
    });
    this.admin = this.kafka.admin();
  }

  /** Connects the producer and the admin client; safe to call more than once. */
  connect(): Promise<void> {
    this.connecting ??= Promise.all([this.producer.connect(), this.admin.connect()]).then(
      () => undefined,
      (err) => {
        this.connecting = undefined;
        throw busError('connect', err);
      },
    );
    return this.connecting;
  }

  /**
   * Publishes with acks=-1 in size-bounded sends, in order; durable once resolved. On failure
   * earlier sends may have landed, so a retry can duplicate messages (consumers deduplicate).
   */
  async publish(topic: string, messages: BusMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.connect();
    await this.ensureTopics([topic]);
    for (const chunk of chunkBySize(messages, this.maxRequestBytes)) {
      try {
        await this.producer.send({
          topic,
          acks: -1,
          compression: CompressionTypes.None,
          messages: chunk.map((m) => ({ key: m.key, value: m.value, headers: m.headers })),
        });
      } catch (err) {
        throw busError(`publish to ${topic}`, err);
      }
    }
  }

  /**
   * Creates the topics that do not exist yet (CreateTopics, `partitions` partitions, replication
   * factor min(3, brokers)), so a fresh cluster needs no setup step: the admin client never
   * auto-creates, and a broker's own auto-creation would use its `num.partitions` (1 by default).
   * A topic someone else created, also in a race, is used as it is; one with another partition
   * count is refused (CONFIG_INVALID), as the keys' partitions would not match `partitionFor`.
   */
  private async ensureTopics(topics: string[]): Promise<void> {
    const unchecked = topics.filter((t) => !this.checkedTopics.has(t));
    if (unchecked.length === 0) return;
    let counts: Map<string, number>;
    try {
      const existing = new Set(await this.admin.listTopics());
      const missing = unchecked.filter((t) => !existing.has(t));
      if (missing.length > 0) {
        const { brokers } = await this.admin.describeCluster();
        const replicationFactor = Math.min(3, brokers.length);
        const created = await this.admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((topic) => ({ topic, numPartitions: this.partitions, replicationFactor })),
        });
        if (created)
          this.logger.info({ topics: missing, partitions: this.partitions }, 'created kafka topics');
        for (const topic of missing) await this.leadersServing(topic);
      }
      const { topics: meta } = await this.admin.fetchTopicMetadata({ topics: unchecked });
      counts = new Map(meta.map((t) => [t.name, t.partitions.length]));
    } catch (err) {
      throw busError(`topics ${unchecked.join(', ')}`, err);
    }
    for (const topic of unchecked) {
      const count = counts.get(topic) ?? 0;
      if (count !== this.partitions) {
        throw new VaultstreamError(
          'CONFIG_INVALID',
          `topic ${topic} has ${count} partitions, the bus is configured for ${this.partitions}`,
        );
      }
      this.checkedTopics.add(topic);
    }
  }

  /**
   * Waits until every partition's leader answers for `topic`. createTopics' waitForLeaders sees
   * the leaders in the metadata before the broker applied them: a produce then gets NOT_LEADER on
   * some partitions and kafkajs resends the whole request, to the partitions that took it too
   * (duplicates in the log). ListOffsets is answered by each partition's leader only.
   */
  private async leadersServing(topic: string): Promise<void> {
    const deadline = Date.now() + LEADER_WAIT_MS;
    for (;;) {
      try {
        await this.admin.fetchTopicOffsets(topic);
        return;
      } catch (err) {
        if ((err as { retriable?: boolean }).retriable === false || Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /** Starts a consumer in `opts.groupId`; resolves once it has joined the group. */
  async subscribe(opts: SubscribeOptions): Promise<KafkaSubscription> {
    if (opts.topics.length === 0 || !(opts.maxBatchSize >= 1)) {
      throw new VaultstreamError('BAD_INPUT', 'subscribe needs at least one topic and maxBatchSize >= 1');
    }
    await this.connect();
    await this.ensureTopics(opts.topics);
    const consumer = this.kafka.consumer({
      groupId: opts.groupId,
      // The broker's long poll when there is nothing to fetch; capped so that an idle partition's
      // refetch (which hands over its partial batch) starts soon after the window ends.
      maxWaitTimeInMs: Math.min(Math.max(opts.maxWaitMs, 10), MAX_FETCH_WAIT_MS),
      maxBytesPerPartition: 16 << 20,
      maxBytes: 64 << 20,
      sessionTimeout: this.sessionTimeoutMs,
      heartbeatInterval: Math.min(3_000, Math.floor(this.sessionTimeoutMs / 3)),
      allowAutoTopicCreation: false,
      retry: {
        restartOnFailure: async (err) => {
          this.logger.error({ err, groupId: opts.groupId }, 'kafka consumer crashed, restarting');
          return true;
        },
      },
    });
    const sub = new KafkaSubscription(consumer, this.admin, opts, this.logger, (s) =>
      this.subscriptions.delete(s),
    );
    try {
      await sub.start();
    } catch (err) {
      await consumer.disconnect().catch(() => {});
      throw busError(`subscribe ${opts.groupId}`, err);
    }
    this.subscriptions.add(sub);
    return sub;
  }

  /** End offset minus committed offset (or log start when nothing is committed), per partition. */
  async lag(groupId: string, topics: string[]): Promise<Record<string, number[]>> {
    await this.connect();
    const out: Record<string, number[]> = {};
    try {
      // A topic nobody has published to or subscribed yet does not exist: nothing to consume there.
      const existing = new Set(await this.admin.listTopics());
      for (const topic of topics) if (!existing.has(topic)) out[topic] = [];
      const present = topics.filter((t) => existing.has(t));
      const committed = present.length ? await this.admin.fetchOffsets({ groupId, topics: present }) : [];
      for (const topic of present) {
        const ends = await this.admin.fetchTopicOffsets(topic);
        const mine = committed.find((t) => t.topic === topic)?.partitions ?? [];
        const lags: number[] = [];
        for (const e of ends) {
          const c = BigInt(mine.find((p) => p.partition === e.partition)?.offset ?? '-1');
          const from = c >= 0n ? c : BigInt(e.low);
          lags[e.partition] = Math.max(0, Number(BigInt(e.high) - from));
        }
        out[topic] = lags;
      }
    } catch (err) {
      throw busError('lag', err);
    }
    return out;
  }

  /** Stops every subscription (aborting those whose handler outlasts a 30 s grace), then disconnects. */
  async close(): Promise<void> {
    await Promise.all(
      [...this.subscriptions].map(async (sub) => {
        const graceful = sub.stop();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), CLOSE_GRACE_MS);
        });
        const outcome = await Promise.race([graceful, late]);
        clearTimeout(timer);
        if (outcome === 'late') await sub.abort();
      }),
    );
    this.subscriptions.clear();
    await Promise.allSettled([this.producer.disconnect(), this.admin.disconnect()]);
    this.connecting = undefined;
  }
}
