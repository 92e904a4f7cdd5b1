/**
 * The pipeline's settings: the store, the bus and the stream consumers between them
 * (docs/architecture.md, Data flow).
 */
import { z } from 'zod';

/** The store: a ClickHouse server, or embedded chDB under the data directory. */
export const storeSchema = z
  .object({
    /** ClickHouse server URL; empty means embedded chDB in `<dataDir>/chdb`. */
    url: z.string().default(''),
    username: z.string().default('default'),
    password: z.string().default(''),
    database: z
      .string()
      .regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/)
      .default('vaultstream'),
    /** Cluster name; when set, migrations render ON CLUSTER, Replicated engines and Distributed tables. */
    cluster: z.string().default(''),
  })
  .prefault({});

/** The bus: the in-process log under the data directory, or Kafka (with an optional schema registry). */
export const busSchema = z
  .object({
    kind: z.enum(['inprocess', 'kafka']).default('inprocess'),
    brokers: z.array(z.string().min(1)).default([]),
    clientId: z.string().default('vaultstream'),
    schemaRegistryUrl: z.string().default(''),
    partitions: z.number().int().min(1).max(256).default(4),
    /** Kafka consumer session timeout: how soon a dead consumer's partitions move to another. */
    sessionTimeoutMs: z.number().int().min(3000).max(300_000).default(30_000),
    /**
     * In-process bus: how often the bytes of its logs every consumer group committed past are
     * freed (bus/inprocess-retention.ts); 0 keeps everything.
     */
    retentionCheckMs: z.number().int().min(0).max(86_400_000).default(60_000),
  })
  .prefault({});

/** The stream consumers (streams/processor.ts): consumer group, batch size and wait, encoder threads. */
export const streamsSchema = z
  .object({
    groupId: z.string().min(1).default('vaultstream-streams'),
    maxBatchSize: z.number().int().min(1).max(1_000_000).default(50_000),
    maxWaitMs: z.number().int().min(0).max(60_000).default(250),
    /** Threads that decode, validate and encode batches (streams/batch-encoder.ts); 0: the main thread. */
    workers: z.number().int().min(0).max(16).default(0),
    /**
     * Pause between two settles of the metrics tables (views/settle.ts): the API's metrics are at
     * most this much (plus one settle) behind the stored events.
     */
    settleIntervalMs: z.number().int().min(50).max(3_600_000).default(1000),
  })
  .prefault({});
