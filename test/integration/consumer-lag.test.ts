/**
 * The consumers' lag as readiness, /metrics and /status read it (streams/consumer-lag.ts), on the
 * real in-process bus: per partition of every topic, labelled by the topic's full name, and a
 * topic more than the bound behind is named as a reason.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InProcessBus } from '../../bus/inprocess.ts';
import { registry } from '../../core/metrics.ts';
import { ConsumerLag } from '../../streams/consumer-lag.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-consumer-lag-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('consumer lag', () => {
  it('reads every partition of every topic, fills the gauges by full topic name, and names the topics behind', async () => {
    const bus = new InProcessBus({ dir, partitions: 2 });
    await bus.connect();
    const topics = ['vaultstream.transfers', 'vaultstream.rates'];
    await bus.publish(
      topics[0],
      Array.from({ length: 30 }, (_, i) => ({ key: `vault-${i % 5}`, value: Buffer.from(`transfer ${i}`) })),
    );
    let t = 0;
    const lag = new ConsumerLag(bus, { groupId: 'g', topics, clock: () => t });
    const per = await lag.read();
    expect(per[topics[1]].every((n) => n === 0)).toBe(true);
    const total = per[topics[0]].reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(30); // bytes of log: the in-process bus's offsets
    expect(await lag.reasons(total)).toEqual([]);
    expect(await lag.reasons(total - 1)).toEqual([
      `vaultstream.transfers is ${total} bytes behind (max ${total - 1})`,
    ]);
    const metrics = await registry.getSingleMetricAsString('vaultstream_consumer_lag_bytes');
    for (const [p, n] of per[topics[0]].entries())
      expect(metrics).toContain(
        `vaultstream_consumer_lag_bytes{topic="vaultstream.transfers",partition="${p}"} ${n}`,
      );
    // Read at most once per interval: a later publish shows once the interval has passed.
    await bus.publish(topics[1], [{ key: 'vault-1', value: Buffer.from('rate') }]);
    expect((await lag.read())[topics[1]].every((n) => n === 0)).toBe(true);
    t += 1000;
    expect((await lag.read())[topics[1]].some((n) => n > 0)).toBe(true);
    await bus.close();
  });
});
