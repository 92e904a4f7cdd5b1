/**
 * Prometheus metrics of the process (one registry per thread, exposed by the API's /metrics).
 * On the API's own thread (api/thread/worker.ts) the registry holds the API's metrics and that
 * thread's event-loop delay and GC pauses, labelled `thread="api"`; the process-wide defaults
 * (CPU, memory, handles) are the main thread's, and /metrics serves both registries as one.
 */
import { workerData } from 'node:worker_threads';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { monitorEventLoop } from './loop-metrics.ts';

/** The thread this registry describes when it is not the main one (set by api/thread/host.ts). */
export const metricsThread: string | undefined = (workerData as { metricsThread?: string } | null)
  ?.metricsThread;

export const registry = new Registry();
if (!metricsThread) collectDefaultMetrics({ register: registry });
monitorEventLoop(registry, metricsThread ? { thread: metricsThread } : {});

export const rowsInserted = new Counter({
  name: 'vaultstream_rows_inserted_total',
  help: 'Rows inserted into raw tables by the stream consumers',
  labelNames: ['table'] as const,
  registers: [registry],
});
export const rowsSkipped = new Counter({
  name: 'vaultstream_rows_deduplicated_total',
  help: 'Rows dropped because their event was already in that state (replays, re-publishes)',
  labelNames: ['table'] as const,
  registers: [registry],
});
export const deadLetters = new Counter({
  name: 'vaultstream_dead_letters_total',
  help: 'Records sent to the dead-letter topic',
  labelNames: ['topic'] as const,
  registers: [registry],
});
export const rpcCalls = new Counter({
  name: 'vaultstream_rpc_calls_total',
  help: 'JSON-RPC calls sent to a chain, by method (each attempt, each item of a batch): what a backfill costs',
  labelNames: ['chain', 'method'] as const,
  registers: [registry],
});
/** Reads the consumers' lag into the two gauges below when they are scraped (streams/consumer-lag.ts). */
let consumerLagSource: (() => Promise<unknown>) | undefined;
export function readConsumerLagWith(source: (() => Promise<unknown>) | undefined): void {
  consumerLagSource = source;
}
async function collectConsumerLag(): Promise<void> {
  await consumerLagSource?.().catch(() => undefined);
}
export const consumerLag = new Gauge({
  name: 'vaultstream_consumer_lag_messages',
  help: "Messages the consumer group has not committed, per topic (full name) and partition: the partition's end minus the committed offset (Kafka bus)",
  labelNames: ['topic', 'partition'] as const,
  registers: [registry],
  collect: collectConsumerLag,
});
export const consumerLagBytes = new Gauge({
  name: 'vaultstream_consumer_lag_bytes',
  help: 'Bytes of log the consumer group has not committed, per topic (full name) and partition (in-process bus: its offsets are byte positions)',
  labelNames: ['topic', 'partition'] as const,
  registers: [registry],
  collect: collectConsumerLag,
});
export const batchSeconds = new Histogram({
  name: 'vaultstream_batch_store_seconds',
  help: 'Time to decode, deduplicate and insert one consumed batch',
  labelNames: ['topic'] as const,
  buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
