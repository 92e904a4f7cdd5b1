/**
 * The live benchmark's mix of endpoints and its uncached loads (bench/live.ts step 3), and the same
 * step on its own over a data directory kept between runs, to work on one endpoint's uncached cost
 * without the whole live run each time:
 *
 *   npx tsx bench/live-uncached.ts --data-dir DIR [--build-seconds 60] [--requests 20]
 *     [--api-thread worker|main] [--only apy-history,details]
 *
 * A data directory that does not exist yet is built first as step 1 builds it: `vaultstream start`
 * with the default devnet until `/readyz` answers 200, then `build-seconds` more of live data.
 * Then `vaultstream api` serves it with the response cache off, and each endpoint is requested
 * `requests` times in sequence after one warm-up (median, first quartile and max ms). Prints a
 * table; writes no report (bench/live.ts is the benchmark of record).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startVaultstream, stopProcess } from './live-bare.ts';
import { round } from './report.ts';

/** The mix's endpoints: name and path (`{slug}`: the first vault the API lists). */
export const MIX: [string, string][] = [
  ['details', '/v1/vaults/details'],
  ['details-lite', '/v1/vaults/{slug}/details-lite'],
  ['vault', '/v1/vaults/{slug}'],
  ['holders', '/v1/vaults/holders'],
  ['recent-transactions', '/v1/vaults/recent-transactions'],
  ['apy-history', '/v1/vaults/apy-history'],
  ['performance-history', '/v1/vaults/{slug}/performance-history'],
  ['holders-history', '/v1/vaults/holders-history'],
];

/** The environment of `vaultstream api` for the uncached loads: no response cache, no rate limit. */
export const UNCACHED_ENV = {
  VAULTSTREAM__api__cache__enabled: 'false',
  VAULTSTREAM__api__rateLimit__enabled: 'false',
};

/** One GET of `path` (identity encoding), its time in ms; a non-200 is an error. */
export async function timedGet(base: string, path: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity' } });
  const text = await res.text();
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
  return ms;
}

export interface UncachedLoad {
  name: string;
  path: string;
  medianMs: number;
  q1Ms: number;
  maxMs: number;
}

/** Each of `paths` requested `n` times in sequence from `base` (after one warm-up when `warmUp`). */
export async function uncachedLoads(
  base: string,
  paths: readonly (readonly [string, string])[],
  n: number,
  warmUp: boolean,
): Promise<UncachedLoad[]> {
  const out: UncachedLoad[] = [];
  for (const [name, path] of paths) {
    if (warmUp) await timedGet(base, path); // the first read plans the statements
    const ms: number[] = [];
    for (let i = 0; i < n; i++) ms.push(await timedGet(base, path));
    ms.sort((a, b) => a - b);
    const at = (q: number) => round(ms[Math.floor((n - 1) * q)], 1);
    out.push({ name, path, medianMs: at(0.5), q1Ms: at(0.25), maxMs: at(1) });
  }
  return out;
}

/** The mix's paths with `{slug}` as the first vault the API at `base` lists. */
export async function mixPaths(base: string): Promise<{ slug: string; paths: [string, string][] }> {
  const vaults = (await (await fetch(`${base}/v1/vaults`)).json()) as { data: { slug: string }[] };
  const slug = vaults.data[0]?.slug;
  if (!slug) throw new Error('the API lists no vault');
  return { slug, paths: MIX.map(([name, p]) => [name, p.replace('{slug}', slug)]) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      'build-seconds': { type: 'string', default: '60' },
      requests: { type: 'string', default: '20' },
      'api-thread': { type: 'string', default: 'worker' },
      only: { type: 'string' },
    },
  });
  const dataDir = values['data-dir'];
  if (!dataDir) throw new Error('--data-dir DIR is required (built first when it does not exist)');
  if (!existsSync(dataDir)) {
    console.log(`building ${dataDir}: vaultstream start with the default devnet`);
    const svc = await startVaultstream('start', dataDir, { VAULTSTREAM__devnet__enabled: 'true' });
    await new Promise((r) => setTimeout(r, Number(values['build-seconds']) * 1000));
    await stopProcess(svc.proc);
  }
  const api = await startVaultstream('api', dataDir, {
    ...UNCACHED_ENV,
    VAULTSTREAM__api__thread: values['api-thread'] ?? 'worker',
  });
  try {
    const only = values.only?.split(',');
    const { paths } = await mixPaths(api.url);
    const chosen = paths.filter(([name]) => !only || only.includes(name));
    console.table(await uncachedLoads(api.url, chosen, Math.max(1, Number(values.requests)), true));
  } finally {
    await stopProcess(api.proc);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
