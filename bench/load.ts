/** HTTP load with autocannon, for the benchmarks: requests/s, p50, p99, non-2xx and errors. */
import { createRequire } from 'node:module';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  statusCodeStats?: Record<string, { count: number }>;
}
/** The run: a promise of its result, and an emitter of each response (`responseTime`: ms, fractional). */
type Run = Promise<AutocannonResult> & {
  on(
    event: 'response',
    fn: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void,
  ): void;
};
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  requests?: { method: 'GET'; path: string }[];
}) => Run;
// autocannon ships no type declarations: the one call used here is typed above.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface LoadNumbers {
  requestsPerSecond: number;
  /** Requests answered in the run (0: none came back in time, and the other numbers mean nothing). */
  completed: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** Answers by status code other than 2xx (e.g. `{ "503": 2 }`): which errors the non-2xx were. */
  non2xxByStatus: Record<string, number>;
  /**
   * The same latencies of the 2xx answers at microsecond resolution (ms, 3 decimals), from each
   * response's own time: autocannon's histogram keeps whole milliseconds (a p99 of 1 is 1.000-1.999 ms).
   */
  fine: { p50Ms: number; p99Ms: number; p999Ms: number; maxMs: number } | null;
}

/** Every 2xx response's time (ms) of a run, in a growing typed array. */
class Times {
  private a = new Float64Array(1 << 16);
  n = 0;
  add(ms: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = ms;
  }
  quantiles(): LoadNumbers['fine'] {
    if (this.n === 0) return null;
    const s = this.a.subarray(0, this.n).sort();
    const at = (q: number) => Math.round(s[Math.min(this.n - 1, Math.ceil(q * this.n) - 1)] * 1000) / 1000;
    return { p50Ms: at(0.5), p99Ms: at(0.99), p999Ms: at(0.999), maxMs: at(1) };
  }
}

/** Runs autocannon, keeping each 2xx response's time as well. */
async function timed(opts: Parameters<Autocannon>[0]): Promise<LoadNumbers> {
  const times = new Times();
  const run = autocannon(opts);
  run.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) times.add(ms);
  });
  return { ...numbers(await run), fine: times.quantiles() };
}

/** What autocannon measured, as the benchmarks report it. */
function numbers(r: AutocannonResult): Omit<LoadNumbers, 'fine'> {
  return {
    requestsPerSecond: r.requests.average,
    completed: r.requests.total,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    non2xxByStatus: Object.fromEntries(
      Object.entries(r.statusCodeStats ?? {})
        .filter(([code]) => !code.startsWith('2'))
        .map(([code, s]) => [code, s.count]),
    ),
  };
}

/** `connections` clients requesting `url` for `seconds`. */
export async function load(url: string, seconds: number, connections = 100): Promise<LoadNumbers> {
  return timed({ url, connections, duration: seconds });
}

/** `connections` clients each cycling through `paths` on `base` for `seconds` (a mix of endpoints). */
export async function loadMix(
  base: string,
  paths: string[],
  seconds: number,
  connections: number,
): Promise<LoadNumbers> {
  return timed({
    url: base,
    connections,
    duration: seconds,
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
}
