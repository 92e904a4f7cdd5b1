/** HTTP load with autocannon, for the benchmarks: requests/s, p50, p99, non-2xx and errors. */
import { createRequire } from 'node:module';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  statusCodeStats?: Record<string, { count: number }>;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  requests?: { method: 'GET'; path: string }[];
}) => Promise<AutocannonResult>;
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
}

/** What autocannon measured, as the benchmarks report it. */
function numbers(r: AutocannonResult): LoadNumbers {
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
  const r = await autocannon({ url, connections, duration: seconds });
  return numbers(r);
}

/** `connections` clients each cycling through `paths` on `base` for `seconds` (a mix of endpoints). */
export async function loadMix(
  base: string,
  paths: string[],
  seconds: number,
  connections: number,
): Promise<LoadNumbers> {
  const r = await autocannon({
    url: base,
    connections,
    duration: seconds,
    requests: paths.map((path) => ({ method: 'GET', path })),
  });
  return numbers(r);
}
