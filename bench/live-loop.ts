/**
 * What held the service's event loop during a load window (bench/live.ts): the difference of
 * two scrapes of its /metrics (`counters`, which also reads its rows, cache loads and RSS) for the cumulative histograms of core/loop-metrics.ts, the
 * event-loop delay and the GC pauses. Quantiles are the upper bounds of the buckets they fall in
 * ("at most"), as Prometheus' own histogram_quantile would not interpolate them honestly here.
 */

/** Per histogram series (name plus labels without `le`): bucket bound -> cumulative count, sum, count. */
export type Scrape = Map<string, { buckets: Map<number, number>; sum: number; count: number }>;

/** The series of the histograms named in `names` from a Prometheus text exposition. */
export function parseHistograms(text: string, names: string[]): Scrape {
  const out: Scrape = new Map();
  const series = (key: string) => {
    const s = out.get(key) ?? { buckets: new Map<number, number>(), sum: 0, count: 0 };
    out.set(key, s);
    return s;
  };
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+?)(_bucket|_sum|_count)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || !names.includes(m[1])) continue;
    const [, name, part, labels = '', value] = m;
    const le = /(?:^|,)le="([^"]+)"/.exec(labels)?.[1];
    const rest = labels
      .split(',')
      .filter((l) => l && !l.startsWith('le='))
      .join(',');
    const s = series(rest ? `${name}{${rest}}` : name);
    if (part === '_bucket' && le !== undefined)
      s.buckets.set(le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), Number(value));
    else if (part === '_sum') s.sum = Number(value);
    else if (part === '_count') s.count = Number(value);
  }
  return out;
}

/** Bucket counts (not cumulative) per bound, sum and count of `key` between two scrapes. */
function diff(a: Scrape, b: Scrape, key: string) {
  const before = a.get(key);
  const after = b.get(key);
  if (!after) return { counts: [] as [number, number][], sum: 0, count: 0 };
  const bounds = [...after.buckets.keys()].sort((x, y) => x - y);
  let prev = 0;
  const counts: [number, number][] = bounds.map((le) => {
    const cum = (after.buckets.get(le) ?? 0) - (before?.buckets.get(le) ?? 0);
    const n = cum - prev;
    prev = cum;
    return [le, n];
  });
  return { counts, sum: after.sum - (before?.sum ?? 0), count: after.count - (before?.count ?? 0) };
}

/** The upper bound (ms) of the bucket holding quantile `q` of `counts`. */
function quantileMs(counts: [number, number][], total: number, q: number): number | null {
  if (total === 0) return null;
  let seen = 0;
  for (const [le, n] of counts) {
    seen += n;
    if (seen >= q * total) return le * 1000;
  }
  return null;
}

const ms = (s: number) => Math.round(s * 10_000) / 10;

export interface LoopWindow {
  /** Event-loop delay samples (a timer due every 2 ms) in the window, their quantiles as bucket bounds ("≤ ms"). */
  delay: {
    samples: number;
    p50AtMostMs: number | null;
    p99AtMostMs: number | null;
    p999AtMostMs: number | null;
    maxAtMostMs: number | null;
    /** Samples of a delay above 2 ms and above 5 ms: the loop held that long by one task. */
    over2ms: number;
    over5ms: number;
    /** Sum of the delays, ms: about the time the loop was held past a due timer. */
    totalMs: number;
  };
  /** GC pauses of the thread in the window, per kind and in all. */
  gc: {
    pauses: number;
    totalMs: number;
    percentOfWindow: number;
    maxAtMostMs: number | null;
    byKind: Record<string, { pauses: number; totalMs: number }>;
  };
}

export const LOOP_METRICS = ['vaultstream_event_loop_delay_seconds', 'vaultstream_gc_pause_seconds'];

/** Whether the scrape has a thread's series (`thread="api"`: the API's own thread, core/metrics.ts). */
export function hasThread(s: Scrape, thread: string): boolean {
  return s.has(`vaultstream_event_loop_delay_seconds{thread="${thread}"}`);
}

/**
 * The window between scrapes `a` and `b`, `windowMs` long, of one thread's loop: `thread`'s
 * series (the API's own thread: `api`), or the main thread's (no label) when absent.
 */
export function loopWindow(a: Scrape, b: Scrape, windowMs: number, thread?: string): LoopWindow {
  const label = thread ? `thread="${thread}"` : '';
  const d = diff(a, b, `vaultstream_event_loop_delay_seconds${label ? `{${label}}` : ''}`);
  const above = (s: number) => d.counts.filter(([le]) => le > s).reduce((x, [, n]) => x + n, 0);
  const nonEmpty = (c: [number, number][]) => c.filter(([, n]) => n > 0).at(-1)?.[0];
  const dMax = nonEmpty(d.counts);
  const byKind: LoopWindow['gc']['byKind'] = {};
  const gcCounts = new Map<number, number>();
  let pauses = 0;
  let gcSum = 0;
  for (const key of b.keys()) {
    const m = /^vaultstream_gc_pause_seconds\{kind="([^"]+)"(?:,(.*))?\}$/.exec(key);
    if (!m || (m[2] ?? '') !== label) continue;
    const kind = m[1];
    const g = diff(a, b, key);
    if (g.count === 0) continue;
    byKind[kind] = { pauses: g.count, totalMs: ms(g.sum) };
    pauses += g.count;
    gcSum += g.sum;
    for (const [le, n] of g.counts) gcCounts.set(le, (gcCounts.get(le) ?? 0) + n);
  }
  const gcMax = nonEmpty([...gcCounts].sort((x, y) => x[0] - y[0]));
  return {
    delay: {
      samples: d.count,
      p50AtMostMs: quantileMs(d.counts, d.count, 0.5),
      p99AtMostMs: quantileMs(d.counts, d.count, 0.99),
      p999AtMostMs: quantileMs(d.counts, d.count, 0.999),
      maxAtMostMs: dMax === undefined ? null : dMax * 1000,
      // The buckets are the delay's bounds: "above 2 ms" counts the buckets past 0.002.
      over2ms: above(0.002),
      over5ms: above(0.005),
      totalMs: ms(d.sum),
    },
    gc: {
      pauses,
      totalMs: ms(gcSum),
      percentOfWindow: Math.round((1000 * gcSum * 1000) / Math.max(1, windowMs)) / 10,
      maxAtMostMs: gcMax === undefined ? null : gcMax * 1000,
      byKind,
    },
  };
}

/** The window's loops: the one requests waited on (the API's thread when it has one), and the main thread's then. */
export function loops(a: Scrape, b: Scrape, windowMs: number): { loop: LoopWindow; mainLoop?: LoopWindow } {
  const main = loopWindow(a, b, windowMs);
  return hasThread(b, 'api') ? { loop: loopWindow(a, b, windowMs, 'api'), mainLoop: main } : { loop: main };
}

/**
 * What moved in the service so far (its /metrics): rows the consumers inserted, answers the cache
 * computed, and the cumulative event-loop delay and GC pause histograms.
 */
export async function counters(base: string): Promise<{
  rows: number;
  foreground: number;
  background: number;
  lookups: Record<string, number>;
  loop: Scrape;
  rssMb: number;
}> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const sum = (name: string, label = '') =>
    text
      .split('\n')
      .filter((l) => l.startsWith(`${name}{`) && l.includes(label))
      .reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
  return {
    rows: sum('vaultstream_rows_inserted_total'),
    foreground: sum('vaultstream_api_cache_loads_total', 'mode="foreground"'),
    background: sum('vaultstream_api_cache_loads_total', 'mode="background"'),
    // How the cache answered: hit, previous (an earlier version's answer while the new one loads), miss...
    lookups: Object.fromEntries(
      ['hit', 'previous', 'miss', 'coalesced', 'stale'].map((r) => [
        r,
        sum('vaultstream_api_cache_lookups_total', `result="${r}"`),
      ]),
    ),
    loop: parseHistograms(text, LOOP_METRICS),
    rssMb: Math.round(
      Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1] ?? Number.NaN) / 2 ** 20,
    ),
  };
}
