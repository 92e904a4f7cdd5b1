/**
 * Views micro-benchmark: `npx tsx bench/views.ts [--size tiny|full] [--out FILE.json]
 * [--events FILE.ndjson | --data-dir DIR] [--now UNIX_SECONDS] [--runs 15] [--views a,b,...]`.
 *
 * Times, on one embedded store (chDB, one query at a time), the API's uncached load of the
 * vault data (`loadContexts` over every registered vault) and a `SELECT *` of each metric view
 * (all rows fetched as JSON, as the API reads them): min / median / max of `runs` runs after
 * one warm-up run each.
 *
 * Data: `--events` replays an NDJSON event file (registry first) through the real CLI
 * (`replay`, then `streams --until-drained`) into a temp data dir, as the parity tests do with
 * the vault scenario (write that scenario's lines to a file to benchmark on it; bench/ does not
 * import test/); `--data-dir` uses an existing data dir as it is; with neither, a small
 * dataset is generated with `bench/api.ts generate` (3 vaults, a year of history, 1000
 * holders; tiny: 1 vault, 100 holders, 1 run). `--now` is the API clock (default: the current
 * time). The migrations are applied first, so the run measures the views of the working tree.
 *
 * Results are printed and reported (rows: the vault data load and the sum over the views of
 * their median; every view's timing in `results`). A diagnostic: no target.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRegistry } from '../api/read/registry.ts';
import { loadContexts } from '../api/read/vault-context.ts';
import { parseConfig } from '../core/config.ts';
import { createStore } from '../store/client.ts';
import { migrate } from '../views/migrate.ts';
import { benchArgs, round, row, writeReport } from './report.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const VIEWS = [
  'vault_settlement',
  'vault_price_current',
  'price_close_daily',
  'vault_price_daily',
  'nav_apy_daily',
  'tvl_chain_daily',
  'vault_tvl_daily',
  'liquid_funds_asset_daily',
  'liquid_funds_daily',
  'composition_daily',
  'composition_apy_daily',
  'vault_liquidity_daily',
];

function run(cmd: string, args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: 'inherit',
    });
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

async function prepare(
  events: string | undefined,
  dataDir: string | undefined,
  generated: { vaults: string; holders: string },
): Promise<{ dir: string; temp?: string }> {
  if (dataDir) return { dir: dataDir };
  const temp = mkdtempSync(join(tmpdir(), 'vs-bench-views-'));
  const dir = join(temp, 'data');
  const env = { VAULTSTREAM_DATA_DIR: dir };
  const cli = join(ROOT, 'bin', 'vaultstream.mjs');
  if (events) {
    await run(process.execPath, [cli, 'replay', events], env);
    await run(process.execPath, [cli, 'streams', '--until-drained'], env);
  } else {
    await run(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'bench', 'api.ts'),
        'generate',
        dir,
        generated.vaults,
        generated.holders,
      ],
      env,
    );
  }
  return { dir, temp };
}

interface Timing {
  min: number;
  median: number;
  max: number;
  rows: number;
}

async function time(runs: number, f: () => Promise<number>): Promise<Timing> {
  const rows = await f(); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await f();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 10) / 10;
  return { min: r(ms[0]), median: r(ms[Math.floor(ms.length / 2)]), max: r(ms[ms.length - 1]), rows };
}

const { values, size, out } = benchArgs(
  'views',
  { events: undefined, 'data-dir': undefined, now: undefined, views: undefined, runs: undefined },
  { tiny: { runs: '1', vaults: '1', holders: '100' }, full: { runs: '15', vaults: '3', holders: '1000' } },
);
const runs = Number(values.runs);
const nowMs = values.now ? Number(values.now) * 1000 : Date.now();
const views = values.views ? values.views.split(',') : VIEWS;

const { dir, temp } = await prepare(values.events, values['data-dir'], {
  vaults: values.vaults,
  holders: values.holders,
});
const config = parseConfig({ dataDir: dir });
const store = await createStore(config);
const db = config.store.database;
try {
  await migrate(store, { database: db, cluster: '' });
  const vaults = await loadRegistry(store);
  const results: Record<string, Timing> = {};
  results.loadContexts = await time(
    runs,
    async () => (await loadContexts(store, vaults, nowMs)).contexts.length,
  );
  for (const v of views)
    results[v] = await time(runs, async () => (await store.query(`SELECT * FROM ${db}.${v}`)).length);
  const width = Math.max(...Object.keys(results).map((k) => k.length));
  console.log(
    `${'what'.padEnd(width)}  min ms  median ms  max ms  rows   (${runs} runs, load ${loadavg()[0].toFixed(2)})`,
  );
  for (const [k, t] of Object.entries(results))
    console.log(
      `${k.padEnd(width)}  ${String(t.min).padStart(6)}  ${String(t.median).padStart(9)}  ${String(t.max).padStart(6)}  ${t.rows}`,
    );
  const viewsMs = views.reduce((sum, v) => sum + results[v].median, 0);
  const what = `views, ${vaults.length} vault(s)`;
  writeReport(out, {
    name: 'views',
    size,
    rows: [
      row(`${what}: the API's uncached vault data load, median`, results.loadContexts.median, 'ms'),
      row(`${what}: SELECT * of ${views.length} metric views, sum of medians`, round(viewsMs, 1), 'ms'),
    ],
    runs,
    nowMs,
    loadavg: loadavg(),
    results,
  });
} finally {
  await store.close();
  if (temp) rmSync(temp, { recursive: true, force: true });
}
