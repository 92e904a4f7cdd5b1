/**
 * The read-only SQL interfaces for the data team and BI tools: the ClickHouse-compatible
 * HTTP interface the embedded process serves (`api/sql/`) and `vaultstream sql`. Both run
 * analysts' queries in a process of their own over a read-only copy of the service's tables
 * (`sql.analysts`, docs/architecture.md#the-sql-interface).
 */
import { z } from 'zod';

const user = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a user name is letters, digits, _ . -'),
    password: z
      .string()
      .default('')
      .describe('Empty: no password (accepted only while the interface listens on loopback).'),
  })
  .strict();

export const sqlSchema = z
  .object({
    http: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe('Serve the interface (embedded store only: a ClickHouse server has its own).'),
        host: z
          .string()
          .default('127.0.0.1')
          .describe('Listen address of the SQL interface (beyond loopback every user needs a password).'),
        port: z
          .number()
          .int()
          .min(0)
          .max(65535)
          .default(8123)
          .describe('Listen port of the SQL interface (ClickHouse HTTP).'),
        users: z
          .array(user)
          .min(1)
          .default([{ name: 'default', password: '' }])
          .describe('Users and passwords; the first is the default user of requests that name none.'),
        maxConcurrentQueries: z
          .number()
          .int()
          .min(1)
          .max(64)
          .default(2)
          .describe(
            'Analyst queries admitted at once (the engine runs one query at a time; the API goes first).',
          ),
        maxQueuedQueries: z
          .number()
          .int()
          .min(0)
          .max(1024)
          .default(16)
          .describe('Analyst queries that wait for one of those to finish (beyond: 503, Code 202).'),
        queueWaitMs: z
          .number()
          .int()
          .min(0)
          .max(600_000)
          .default(30_000)
          .describe('How long a queued query waits for its turn before it is refused (ms).'),
        maxQueryBytes: z
          .number()
          .int()
          .min(1024)
          .max(16_777_216)
          .default(1_048_576)
          .describe('Largest query text (URL plus body), in bytes.'),
        clientTimeoutMs: z
          .number()
          .int()
          .min(100)
          .max(600_000)
          .default(10_000)
          .describe(
            'How long a request may take to send its headers and whole body, and how long an answer may wait for a client that stops reading it (ms); past either the connection is closed and its query slot freed.',
          ),
        checkTimeoutMs: z
          .number()
          .int()
          .min(10)
          .max(60_000)
          .default(5_000)
          .describe(
            'How long the engine may take to parse and resolve a query before it runs (ms): a query that takes longer to check is refused (HTTP 400).',
          ),
      })
      .strict()
      .prefault({}),
    limits: z
      .object({
        maxExecutionTimeSeconds: z.number().int().min(1).max(3600).default(10),
        maxResultRows: z.number().int().min(1).default(1_000_000),
        maxResultBytes: z.number().int().min(1024).default(268_435_456),
        maxMemoryUsageBytes: z.number().int().min(1_048_576).default(2_147_483_648),
        maxThreads: z
          .number()
          .int()
          .min(1)
          .max(64)
          .default(1)
          .describe("Engine threads per query: the rest of the machine stays for the service's own queries."),
      })
      .strict()
      .prefault({})
      .describe(
        'Caps on every read-only query (HTTP and `vaultstream sql`); clients may lower, never raise them.',
      ),
    analysts: z
      .object({
        refreshIntervalMs: z
          .number()
          .int()
          .min(100)
          .max(3_600_000)
          .default(2_000)
          .describe(
            "How often the analysts' copy of the service's tables takes the service's new data (ms): at most this much older than the store, plus the refresh itself.",
          ),
        nice: z
          .number()
          .int()
          .min(0)
          .max(19)
          .default(19)
          .describe(
            "Nice value of the analysts' process's threads (Linux), in the service's own session: when a core is wanted by both, the API's thread (0) and the store and pipeline it waits on (api.pipelineNice) go before analysts' queries.",
          ),
        maxServerMemoryBytes: z
          .number()
          .int()
          .min(67_108_864)
          .default(4_294_967_296)
          .describe(
            "Memory the analysts' engine may hold in all (its max_server_memory_usage): past it their queries fail, the service is not touched.",
          ),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});

export type SqlSettings = z.infer<typeof sqlSchema>;
