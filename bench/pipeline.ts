/**
 * Pipeline throughput: events per second from publish to queryable in the views.
 * Publishes N transfer events (over V vaults and 8 chains) through the bus, runs the
 * stream consumers until drained, and checks the views hold them all. Reports the
 * publish rate, the end-to-end rate and the peak RSS of the process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { topicName } from '../bus/partition.ts';
import type { Bus } from '../bus/types.ts';
import { createBus, createCodec, createStore } from '../cli/wiring.ts';
import { type Config, parseConfig } from '../core/config.ts';
import { createLogger } from '../core/log.ts';
import { transferEvents } from '../devnet/synthetic-transfers.ts';
import { StreamProcessor } from '../streams/processor.ts';
import { migrate } from '../views/migrate.ts';

export interface PipelineBenchResult {
  bus: string;
  events: number;
  publishSeconds: number;
  endToEndSeconds: number;
  eventsPerSecond: number;
  peakRssMb: number;
  /** CPU time of the whole process (every thread, chDB's too) from the first publish to queryable. */
  cpuSeconds: number;
  holders: number;
}

export async function benchPipeline(opts: {
  events: number;
  vaults: number;
  brokers?: string[];
  topicPrefix?: string;
  batchSize?: number;
}): Promise<PipelineBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'vs-bench-'));
  const raw: Record<string, unknown> = {
    dataDir: dir,
    logLevel: 'warn',
    topicPrefix: opts.topicPrefix ?? `bench${Date.now()}.`,
    // The consumers' batching is the product's default (streams.maxWaitMs) unless a batch size is given.
    streams: { maxBatchSize: opts.batchSize ?? 50_000 },
  };
  if (opts.brokers) raw.bus = { kind: 'kafka', brokers: opts.brokers, partitions: 4 };
  const cfg: Config = parseConfig(raw);
  const log = createLogger('warn');
  const bus: Bus = await createBus(cfg, log);
  const codec = createCodec(cfg);
  const store = await createStore(cfg);
  try {
    await bus.connect();
    await migrate(store, { database: cfg.store.database, cluster: '' });
    const topic = topicName(cfg.topicPrefix, 'transfers');
    const processor = new StreamProcessor({ bus, store, codec, config: cfg, log });
    // The consumers run while events are published, as in production. Publishing waits while
    // the consumers are more than `maxLag` events behind: librdkafka's mock broker keeps only
    // ~5 MB per partition and drops older records, so an unbounded backlog would lose events.
    // 25,000 (plus the 10,000-event chunk in flight) keeps the busiest partition (36% of the
    // events with 50 vaults, ~335 bytes a record) around 4 MB behind. The lag is counted here,
    // from the rows the consumers report stored: asking the broker for the group's offsets
    // reads no lag before the group's first commit, which let the first chunks run past the
    // mock's retention (the consumer then saw "offset out of range").
    let landed = 0;
    let landedAt = Date.now();
    processor.on('landed', (e: { rows: number }) => {
      landed += e.rows;
      landedAt = Date.now();
    });
    // Consumers that keep failing (their errors are logged) retry forever: fail the run instead.
    const stallMs = 60_000;
    const stalled = () =>
      published > landed && Date.now() - landedAt > stallMs
        ? new Error(
            `no rows stored for ${stallMs / 1000} s (${landed} of ${published} published): see the log`,
          )
        : undefined;
    await processor.start();
    const maxLag = opts.brokers ? 25_000 : Number.POSITIVE_INFINITY;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let chunk: { key: string; value: Buffer }[] = [];
    let published = 0;
    const flush = async () => {
      while (published - landed >= maxLag) {
        const err = stalled();
        if (err) throw err;
        await new Promise((r) => setTimeout(r, 5));
      }
      await bus.publish(topic, chunk);
      published += chunk.length;
      chunk = [];
    };
    for (const ev of transferEvents(opts.events, opts.vaults)) {
      chunk.push({ key: ev.vault, value: codec.encodeSync('transfers', ev) });
      if (chunk.length === 10_000) await flush();
    }
    if (chunk.length) await flush();
    const publishedAt = performance.now();
    let watch: NodeJS.Timeout | undefined;
    await Promise.race([
      processor.drained(),
      new Promise((_, reject) => {
        watch = setInterval(() => {
          const err = stalled();
          if (err) reject(err);
        }, 1000);
      }),
    ]).finally(() => clearInterval(watch));
    await processor.stop();
    const [{ n }] = await store.query<{ n: string }>(
      `SELECT count() AS n FROM ${cfg.store.database}.transfers`,
    );
    const [{ h }] = await store.query<{ h: string }>(
      `SELECT sum(holders) AS h FROM ${cfg.store.database}.vault_holders`,
    );
    const done = performance.now();
    const cpu = process.cpuUsage(cpu0);
    if (Number(n) !== opts.events) throw new Error(`views hold ${n} transfers, expected ${opts.events}`);
    return {
      bus: bus.kind,
      events: opts.events,
      publishSeconds: (publishedAt - t0) / 1000,
      endToEndSeconds: (done - t0) / 1000,
      eventsPerSecond: Math.round(opts.events / ((done - t0) / 1000)),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      holders: Number(h),
    };
  } finally {
    await bus.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
