/**
 * The bus contract shared by the Kafka and the in-process implementations.
 * Producers (ingesters, `replay`) publish keyed byte messages to a topic; consumers
 * receive them per partition in batches, and commit an offset only once the batch
 * has been stored, so a crash replays uncommitted batches (the consumer makes the
 * replay a no-op).
 */
export interface BusMessage {
  /** Partition key (docs/architecture.md, Events and partition keys): the vault slug, chain id or Solana signature. */
  key: string;
  value: Buffer;
  headers?: Record<string, string>;
}

export interface ConsumedMessage extends BusMessage {
  /** Offset within the partition; strictly increasing, not necessarily dense. */
  offset: bigint;
}

export interface Batch {
  topic: string;
  partition: number;
  messages: ConsumedMessage[];
  /** The offset to commit once this batch is stored: last offset + 1 (Kafka convention). */
  nextOffset: bigint;
  /** Messages still in the partition after this batch (for lag metrics); -1 when unknown. */
  lag: number;
}

export interface SubscribeOptions {
  groupId: string;
  topics: string[];
  /** Upper bound on messages per batch. */
  maxBatchSize: number;
  /** How long to wait for a batch to fill before handing over a partial one. */
  maxWaitMs: number;
  /**
   * Called with each batch; the bus awaits it before fetching more from that
   * partition (backpressure) and commits `nextOffset` only after it resolves.
   */
  handler: (batch: Batch) => Promise<void>;
  /** Called when the handler throws; the batch is retried from its first offset after a pause. */
  onError?: (err: unknown, batch: Batch) => void;
}

export interface Subscription {
  /** Stop fetching, let the batch in flight finish and commit, then resolve. */
  stop(): Promise<void>;
  /** Resolves once every subscribed partition has been consumed up to its end at call time. */
  drained(): Promise<void>;
}

export interface Bus {
  readonly kind: 'kafka' | 'inprocess';
  /** Partitions per topic. */
  readonly partitions: number;
  /** What `lag` counts: Kafka offsets are messages; the in-process log's offsets are bytes. */
  readonly lagUnit: 'messages' | 'bytes';
  connect(): Promise<void>;
  /** Durable once resolved (Kafka: acks=-1; in-process: fsync'd to the log file). */
  publish(topic: string, messages: BusMessage[]): Promise<void>;
  subscribe(opts: SubscribeOptions): Promise<Subscription>;
  /** Per partition, end offset minus committed offset for a group (in `lagUnit`), for `/status`. */
  lag(groupId: string, topics: string[]): Promise<Record<string, number[]>>;
  close(): Promise<void>;
}
