/**
 * What holds a thread's event loop, as Prometheus histograms on its registry: how late the
 * loop's timers run (event-loop delay) and how long garbage-collection pauses last. In the
 * embedded deployment the main thread's loop runs ingest, the stream consumers and the settle
 * step, and the API's own thread (api/thread/worker.ts) its requests, so a task that arrives while
 * its loop runs a long synchronous stretch, or while V8 collects, waits for it; these two say how
 * often and how long (docs/architecture.md#event-loop).
 *
 * Both are cumulative, so the distribution over any window is the difference of two scrapes
 * (bench/live.ts reads them around each load).
 *
 * - `vaultstream_event_loop_delay_seconds`: Node's `monitorEventLoopDelay` (a native timer every
 *   RESOLUTION_MS, recorded in an HDR histogram off the JS heap) copied into the Prometheus
 *   buckets at each scrape. A sample is how much later than due the timer ran:
 *   0 on an idle loop, about n ms when a task held the loop for n ms. Each bucket's count is the
 *   share of samples at or below its bound, read from the HDR histogram's percentiles (its values
 *   are exact to 3 significant digits).
 * - `vaultstream_gc_pause_seconds{kind}`: every `gc` performance entry (prom-client's own
 *   `nodejs_gc_duration_seconds` keeps only the first entry of each batch the observer gets, and
 *   its buckets start at 1 ms).
 */
import {
  constants,
  monitorEventLoopDelay,
  type Histogram as NodeHistogram,
  PerformanceObserver,
} from 'node:perf_hooks';
import { Histogram, type Registry } from 'prom-client';

/** The delay monitor's timer period: stalls shorter than this are seen only in part. */
export const RESOLUTION_MS = 2;
const DELAY_BUCKETS = [0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1];
const GC_BUCKETS = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.02, 0.05, 0.1, 0.25];

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** One series as prom-client 15 holds it (it has no public bulk add); see api/http/metrics.ts. */
interface HeldSeries {
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

/** The fraction (0..1) of `h`'s samples at or below `ns`, found by bisecting its percentiles. */
export function fractionAtOrBelow(h: Pick<NodeHistogram, 'percentile' | 'min' | 'max'>, ns: number): number {
  if (ns < h.min) return 0;
  if (ns >= h.max) return 1;
  let lo = 0;
  let hi = 100;
  // 40 halvings: 100 / 2^40 percent, below one sample in 10^12.
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (h.percentile(mid) <= ns) lo = mid;
    else hi = mid;
  }
  return lo / 100;
}

/**
 * Starts both monitors on `registry`; returns their stop. Call once per thread; `labels` tell
 * the threads apart (the API's own thread, api/thread/worker.ts, is `{ thread: 'api' }`; the main
 * thread's series have none).
 */
export function monitorEventLoop(registry: Registry, labels: Record<string, string> = {}): () => void {
  const monitor = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  monitor.enable();
  const resolutionNs = RESOLUTION_MS * 1e6;
  const fold = () => {
    const n = monitor.count;
    if (n === 0) return;
    // The monitor records the whole interval between two timer runs: the delay is what exceeds
    // the period. Its histogram is never reset (a reset forgets the time of the last run, so the
    // interval spanning it, a stall included, would go unrecorded): the buckets are set to its
    // cumulative counts.
    // Its one series (`labels`).
    const [held] = Object.values((delay as unknown as { hashMap: Record<string, HeldSeries> }).hashMap);
    let below = 0;
    for (const b of DELAY_BUCKETS) {
      const at = Math.round(n * fractionAtOrBelow(monitor, b * 1e9 + resolutionNs));
      held.bucketValues[b] = at - below;
      below = at;
    }
    held.sum = Math.max(0, (monitor.mean - resolutionNs) / 1e9) * n;
    held.count = n;
  };
  const delay = new Histogram({
    name: 'vaultstream_event_loop_delay_seconds',
    help: `How late the event loop ran a timer due every ${RESOLUTION_MS} ms: about how long the task before it held the loop (0 when idle)`,
    labelNames: Object.keys(labels),
    buckets: DELAY_BUCKETS,
    registers: [registry],
    collect: fold,
  });
  delay.zero(labels);

  const gc = new Histogram({
    name: 'vaultstream_gc_pause_seconds',
    help: 'Garbage-collection pauses of the thread, by kind (major, minor, incremental, weakcb)',
    labelNames: ['kind', ...Object.keys(labels)],
    buckets: GC_BUCKETS,
    registers: [registry],
  });
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as PerformanceEntry & { detail?: { kind?: number } }).detail;
      const kind = GC_KINDS[detail?.kind ?? -1] ?? 'other';
      gc.observe({ kind, ...labels }, e.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ['gc'] });

  return () => {
    monitor.disable();
    observer.disconnect();
  };
}
