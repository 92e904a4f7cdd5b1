/**
 * The pipeline's settings: the store, the bus and the stream consumers between them
 * (docs/architecture.md, Data flow).
 */
import { z } from 'zod';

/** The store: a ClickHouse server, or embedded chDB under the data directory. */
export const storeSchema = z
  .object({
    url: z
      .string()
      .default('')
      .describe('ClickHouse server URL; empty means embedded chDB in `<dataDir>/chdb`.'),
    username: z.string().default('default').describe('ClickHouse server user.'),
    password: z.string().default('').describe('ClickHouse server password.'),
    database: z
      .string()
      .regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/)
      .default('vaultstream')
      .describe('Database of every table and view.'),
    cluster: z
      .string()
      .default('')
      .describe(
        'Cluster name; when set, migrations render ON CLUSTER, Replicated engines and Distributed tables.',
      ),
  })
  .prefault({});

/** The bus: the in-process log under the data directory, or Kafka (with an optional schema registry). */
export const busSchema = z
  .object({
    kind: z
      .enum(['inprocess', 'kafka'])
      .default('inprocess')
      .describe(
        "`inprocess`: fsync'd logs under `<dataDir>/bus`; `kafka`: the brokers below (`KAFKA_BROKERS` sets both).",
      ),
    brokers: z.array(z.string().min(1)).default([]).describe('Kafka bootstrap brokers, `host:port`.'),
    clientId: z.string().default('vaultstream').describe('Kafka client id.'),
    schemaRegistryUrl: z
      .string()
      .default('')
      .describe('Confluent wire framing with this schema registry; empty: Avro single-object encoding.'),
    partitions: z
      .number()
      .int()
      .min(1)
      .max(256)
      .default(4)
      .describe(
        'Partitions per topic (keys: docs/architecture.md#events-and-partition-keys); a missing topic is created with this count (replication factor min(3, brokers)), an existing one of another count is refused.',
      ),
    sessionTimeoutMs: z
      .number()
      .int()
      .min(3000)
      .max(300_000)
      .default(30_000)
      .describe("Kafka consumer session timeout: how soon a dead consumer's partitions move to another."),
    retentionCheckMs: z
      .number()
      .int()
      .min(0)
      .max(86_400_000)
      .default(60_000)
      .describe(
        'In-process bus: how often the bytes of its logs every consumer group committed past are freed (bus/inprocess-retention.ts); 0 keeps everything.',
      ),
  })
  .prefault({});

/** The stream consumers (streams/processor.ts): consumer group, batch size and wait, encoder threads. */
export const streamsSchema = z
  .object({
    groupId: z
      .string()
      .min(1)
      .default('vaultstream-streams')
      .describe('Consumer group of the stream consumers.'),
    maxBatchSize: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(50_000)
      .describe('Most records per stored batch.'),
    maxWaitMs: z
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(250)
      .describe('Longest wait for a batch to fill before it is stored.'),
    workers: z
      .number()
      .int()
      .min(0)
      .max(16)
      .default(0)
      .describe(
        'Threads that decode, validate and encode batches (streams/batch-encoder.ts); 0: the main thread.',
      ),
    settleIntervalMs: z
      .number()
      .int()
      .min(50)
      .max(3_600_000)
      .default(1000)
      .describe(
        "Pause between two settles of the metrics tables (views/settle.ts): the API's metrics are at most this much (plus one settle) behind the stored events.",
      ),
  })
  .prefault({});
