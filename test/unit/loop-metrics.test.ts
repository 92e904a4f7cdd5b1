/**
 * core/loop-metrics.ts: the process registry exposes how long the event loop was held (a
 * synchronous stretch shows up as one delay sample of about its length) and every GC pause, as
 * cumulative histograms whose difference between two scrapes describes the window between them
 * (what bench/live.ts reports). No speed is asserted: a 40 ms stretch must be one sample above
 * 30 ms (the loop was held at least that long) and none above 1 s.
 */
import { createHistogram } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { fractionAtOrBelow } from '../../core/loop-metrics.ts';
import { registry } from '../../core/metrics.ts';

/** A histogram's series as scraped: per label set (without `le`), cumulative bucket counts, sum, count. */
async function scrape(name: string) {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`${name} is not on the process registry`);
  const out = new Map<string, { le: Map<number, number>; sum: number; count: number }>();
  for (const v of (await metric.get()).values as { labels: object; value: number; metricName?: string }[]) {
    const { le, ...rest } = v.labels as Record<string, string | number>;
    const key = JSON.stringify(rest);
    const s = out.get(key) ?? { le: new Map<number, number>(), sum: 0, count: 0 };
    out.set(key, s);
    if (v.metricName?.endsWith('_bucket'))
      s.le.set(le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), v.value);
    else if (v.metricName?.endsWith('_sum')) s.sum = v.value;
    else if (v.metricName?.endsWith('_count')) s.count = v.value;
  }
  return out;
}
const DELAY = 'vaultstream_event_loop_delay_seconds';
const GC = 'vaultstream_gc_pause_seconds';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('event-loop and GC metrics', () => {
  it('a synchronous 40 ms stretch is one delay sample above 30 ms', async () => {
    await sleep(50); // the monitor runs
    const before = (await scrape(DELAY)).get('{}');
    const t = performance.now();
    while (performance.now() - t < 40) {
      // holds the loop
    }
    await sleep(20);
    const after = (await scrape(DELAY)).get('{}');
    if (!before || !after) throw new Error('no delay series');
    expect(after.count - before.count).toBeGreaterThan(1);
    // Samples above 30 ms: the stretch; none above 1 s.
    const above = (s: typeof after, ms: number) => s.count - (s.le.get(ms / 1000) ?? 0);
    expect(above(after, 30) - above(before, 30)).toBe(1);
    expect(above(after, 1000) - above(before, 1000)).toBe(0);
    expect(after.sum - before.sum).toBeGreaterThanOrEqual(0.03);
  });

  it('counts every GC pause, by kind', async () => {
    const count = async () => {
      const byKind = new Map([...(await scrape(GC))].map(([k, s]) => [JSON.parse(k).kind, s.count]));
      return byKind;
    };
    const before = await count();
    let keep: object[] = [];
    for (let round = 0; round < 20; round++) {
      keep = [];
      for (let i = 0; i < 200_000; i++) keep.push({ i, s: `x${i}` });
    }
    expect(keep.length).toBe(200_000);
    await sleep(20); // the observer is called after the pauses
    const after = await count();
    expect((after.get('minor') ?? 0) - (before.get('minor') ?? 0)).toBeGreaterThan(0);
  });

  it('the fold reads the share of samples at or below a bound from the HDR percentiles', () => {
    const h = createHistogram();
    for (let v = 1; v <= 1000; v++) h.record(v * 1000);
    expect(fractionAtOrBelow(h, 500_000)).toBeCloseTo(0.5, 2);
    expect(fractionAtOrBelow(h, 990_000)).toBeCloseTo(0.99, 2);
    expect(fractionAtOrBelow(h, 1)).toBe(0);
    expect(fractionAtOrBelow(h, 2_000_000)).toBe(1);
  });
});
