/**
 * The Kafka implementation of the bus contract (bus/types.ts), on kafkajs.
 * Producer: acks=-1, murmur2 key partitioning (same as `partitionFor`), no compression,
 * sends chunked below the broker's message size limit. Consumer: one kafkajs consumer per
 * subscription, offsets committed explicitly after the handler resolves.
 */
import type {
  Admin,
  Consumer,
  EachBatchPayload,
  Kafka as KafkaClient,
  KafkaMessage,
  LogEntry,
  Producer,
} from 'kafkajs';
import kafkajs from 'kafkajs';
import { VaultstreamError } from '../core/errors.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import type { Batch, Bus, BusMessage, ConsumedMessage, SubscribeOptions, Subscription } from './types.ts';

const { CompressionTypes, Kafka, logLevel, Partitioners } = kafkajs;

/** Below Kafka's default message.max.bytes (1,048,588), leaving room for batch framing. */
const DEFAULT_MAX_REQUEST_BYTES = 900_000;
const PER_MESSAGE_OVERHEAD = 64;
const RETRY_PAUSE_MIN_MS = 500;
const RETRY_PAUSE_MAX_MS = 30_000;
const DRAIN_POLL_MS = 200;
const CLOSE_GRACE_MS = 30_000;

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

function busError(what: string, err: unknown): VaultstreamError {
  const retryable = (err as { retriable?: boolean } | null)?.retriable !== false;
  const msg = err instanceof Error ? err.message : String(err);
  return new VaultstreamError('BUS_UNAVAILABLE', `kafka ${what} failed: ${msg}`, { cause: err, retryable });
}

function toConsumed(m: KafkaMessage): ConsumedMessage {
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(m.headers ?? {})) {
    const last = Array.isArray(v) ? v[v.length - 1] : v;
    if (last !== undefined) headers[name] = last.toString();
  }
  return {
    key: m.key ? m.key.toString('utf8') : '',
    value: m.value ?? Buffer.alloc(0),
    headers,
    offset: BigInt(m.offset),
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One kafkajs consumer running `eachBatch` for a subscription. */
export class KafkaSubscription implements Subscription {
  private stopping = false;
  private aborted = false;
  private stopPromise?: Promise<void>;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private signalAbort!: () => void;
  private readonly abortSignal = new Promise<void>((resolve) => {
    this.signalAbort = resolve;
  });

  constructor(
    private readonly consumer: Consumer,
    private readonly admin: Admin,
    private readonly opts: SubscribeOptions,
    private readonly logger: Logger,
    private readonly onStopped: (sub: KafkaSubscription) => void = () => {},
  ) {}

  /** Connects, joins the group (the first join takes ~3 s on a fresh group) and starts consuming. */
  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: this.opts.topics, fromBeginning: true });
    await this.consumer.run({
      // One batch at a time: the zombie-member fencing test (kafka-bus.test.ts) fails with 2
      // concurrent partitions; see the session note before raising it.
      partitionsConsumedConcurrently: 1,
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => {
        const run = this.eachBatch(payload).finally(() => this.inFlight.delete(run));
        this.inFlight.add(run);
        return run;
      },
    });
  }

  private async eachBatch(p: EachBatchPayload): Promise<void> {
    const { topic, partition, messages } = p.batch;
    const high = BigInt(p.batch.highWatermark);
    const tp = `${topic}/${partition}`;
    for (let i = 0; i < messages.length; i += this.opts.maxBatchSize) {
      if (this.stopping || !p.isRunning() || p.isStale()) return;
      const slice = messages.slice(i, i + this.opts.maxBatchSize);
      const consumed = slice.map(toConsumed);
      const nextOffset = consumed[consumed.length - 1].offset + 1n;
      const lag = high > nextOffset ? Number(high - nextOffset) : 0;
      const batch: Batch = { topic, partition, messages: consumed, nextOffset, lag };
      try {
        await Promise.race([this.opts.handler(batch), this.abortSignal]);
      } catch (err) {
        if (this.aborted) return;
        try {
          this.opts.onError?.(err, batch);
        } catch (cbErr) {
          this.logger.error({ err: cbErr }, 'bus onError callback threw');
        }
        if (this.stopping) return; // the next subscription resumes from the committed offset
        const n = (this.failures.get(tp) ?? 0) + 1;
        this.failures.set(tp, n);
        const pauseMs = Math.min(RETRY_PAUSE_MIN_MS * 2 ** (n - 1), RETRY_PAUSE_MAX_MS);
        this.logger.warn(
          { err, topic, partition, offset: String(consumed[0].offset), pauseMs },
          'bus handler failed',
        );
        // Redeliver from the batch's first offset once the pause is over.
        this.consumer.seek({ topic, partition, offset: String(consumed[0].offset) });
        const resume = p.pause();
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          if (!this.stopping) resume();
        }, pauseMs);
        this.timers.add(timer);
        return;
      }
      if (this.aborted) return;
      this.failures.delete(tp);
      // Errors here (e.g. a rebalance) propagate to kafkajs, which rejoins and refetches from the committed offset.
      await this.consumer.commitOffsets([{ topic, partition, offset: String(nextOffset) }]);
      p.resolveOffset(slice[slice.length - 1].offset);
      await p.heartbeat();
    }
  }

  /** Stops fetching, lets the batch in flight finish and commit, then leaves the group and disconnects. */
  stop(): Promise<void> {
    this.stopPromise ??= this.shutdown(false);
    return this.stopPromise;
  }

  /**
   * Disconnects at once, as a crash would: the batch in flight is abandoned without a commit
   * (its handler keeps running, its result is ignored), so the group redelivers it.
   */
  abort(): Promise<void> {
    this.aborted = true;
    this.signalAbort();
    this.stopPromise ??= this.shutdown(true);
    return this.stopPromise;
  }

  private async shutdown(abort: boolean): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    try {
      this.consumer.pause(this.opts.topics.map((topic) => ({ topic })));
    } catch {
      // not running (crashed and restarting): nothing to pause
    }
    if (!abort) await Promise.allSettled([...this.inFlight]);
    try {
      await this.consumer.disconnect();
    } catch (err) {
      this.logger.warn({ err, groupId: this.opts.groupId }, 'kafka consumer disconnect failed');
    }
    this.onStopped(this);
  }

  /**
   * Resolves once the group's committed offset reached, on every partition of the subscribed
   * topics, the high watermark at call time. Rejects if the subscription stops first.
   */
  async drained(): Promise<void> {
    const { groupId, topics } = this.opts;
    const targets = new Map<string, bigint>();
    try {
      for (const topic of topics) {
        for (const o of await this.admin.fetchTopicOffsets(topic)) {
          targets.set(`${topic}/${o.partition}`, BigInt(o.high) > BigInt(o.low) ? BigInt(o.high) : -1n);
        }
      }
    } catch (err) {
      throw busError('fetchTopicOffsets', err);
    }
    for (;;) {
      const wasStopping = this.stopping;
      let done = true;
      try {
        for (const t of await this.admin.fetchOffsets({ groupId, topics })) {
          for (const p of t.partitions) {
            const target = targets.get(`${t.topic}/${p.partition}`) ?? -1n;
            if (BigInt(p.offset) < target) done = false;
          }
        }
      } catch (err) {
        throw busError('fetchOffsets', err);
      }
      if (done) return;
      if (wasStopping) {
        throw new VaultstreamError('BUS_UNAVAILABLE', `subscription ${groupId} stopped before it drained`, {
          retryable: false,
        });
      }
      await sleep(DRAIN_POLL_MS);
    }
  }
}

/** The bus on a Kafka cluster (see the module comment for the delivery guarantees). */
export class KafkaBus implements Bus {
  readonly kind = 'kafka' as const;
  readonly partitions: number;
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
    await this.checkTopic(topic);
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

  private async checkTopic(topic: string): Promise<void> {
    if (this.checkedTopics.has(topic)) return;
    let count: number;
    try {
      const { topics } = await this.admin.fetchTopicMetadata({ topics: [topic] });
      count = topics[0]?.partitions.length ?? 0;
    } catch (err) {
      throw busError(`metadata for ${topic}`, err);
    }
    if (count !== this.partitions) {
      throw new VaultstreamError(
        'CONFIG_INVALID',
        `topic ${topic} has ${count} partitions, the bus is configured for ${this.partitions}`,
      );
    }
    this.checkedTopics.add(topic);
  }

  /** Starts a consumer in `opts.groupId`; resolves once it has joined the group. */
  async subscribe(opts: SubscribeOptions): Promise<KafkaSubscription> {
    if (opts.topics.length === 0 || !(opts.maxBatchSize >= 1)) {
      throw new VaultstreamError('BAD_INPUT', 'subscribe needs at least one topic and maxBatchSize >= 1');
    }
    await this.connect();
    const consumer = this.kafka.consumer({
      groupId: opts.groupId,
      maxWaitTimeInMs: opts.maxWaitMs,
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
      const committed = await this.admin.fetchOffsets({ groupId, topics });
      for (const topic of topics) {
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
