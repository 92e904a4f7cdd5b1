/**
 * The consumers' lag, as the bus reports it: per partition of every topic, the partition's end
 * minus the group's committed offset (in the bus's `lagUnit`), the reading `/status` makes too
 * (api/status.ts). It fills the lag gauges when `/metrics` is scraped and tells readiness whether
 * the consumers are caught up; every place labels it alike: the topic's full name
 * (`vaultstream.transfers`, as Kafka's own tools show it) and the partition.
 */
import type { Bus } from '../bus/types.ts';
import * as metrics from '../core/metrics.ts';

export interface ConsumerLagOptions {
  groupId: string;
  topics: string[];
  /** The bus is asked at most this often; callers in between share the last reading. */
  minIntervalMs?: number;
  clock?: () => number;
}

export class ConsumerLag {
  private last?: { at: number; lag: Record<string, number[]> };
  private running?: Promise<Record<string, number[]>>;
  private readonly clock: () => number;

  constructor(
    private readonly bus: Bus,
    private readonly opts: ConsumerLagOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  /** Per topic, each partition's lag; also sets the lag gauges. */
  read(): Promise<Record<string, number[]>> {
    const now = this.clock();
    if (this.last && now - this.last.at < (this.opts.minIntervalMs ?? 1000))
      return Promise.resolve(this.last.lag);
    this.running ??= this.bus
      .lag(this.opts.groupId, this.opts.topics)
      .then((lag) => {
        this.last = { at: now, lag };
        const gauge = this.bus.lagUnit === 'bytes' ? metrics.consumerLagBytes : metrics.consumerLag;
        for (const [topic, parts] of Object.entries(lag))
          for (const [partition, n] of parts.entries()) gauge.set({ topic, partition: String(partition) }, n);
        return lag;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** Per topic, the sum over its partitions. */
  async totals(): Promise<Record<string, number>> {
    const lag = await this.read();
    return Object.fromEntries(Object.entries(lag).map(([t, parts]) => [t, parts.reduce((a, b) => a + b, 0)]));
  }

  /** Why the consumers are not caught up: the topics more than `max` behind (none when within). */
  async reasons(max: number): Promise<string[]> {
    const totals = await this.totals();
    return Object.entries(totals)
      .filter(([, n]) => n > max)
      .map(([topic, n]) => `${topic} is ${n} ${this.bus.lagUnit} behind (max ${max})`);
  }
}
