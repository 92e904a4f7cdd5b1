/**
 * The API's latency with and without heavy analyst queries running on the same embedded engine:
 * `npx tsx bench/sql-contention.ts [--size tiny|full] [--out FILE.json] [--seconds 8] [--vaults 20]
 * [--holders 20000] [--analysts 2]` (tiny: the cached run only, 3 s, 2 vaults, 200 holders, a
 * 40th of the heavy query).
 *
 * Analysts' SQL (the ClickHouse HTTP interface) runs in a process of its own over a copy of the
 * store (docs/architecture.md#the-sql-interface), so an API query never waits for one to finish;
 * they share the machine's CPU (an analyst query gets one engine thread, below the API's thread).
 * bench/sql-worst-analyst.ts is the hostile analyst on the live devnet. Measured here, each for
 * `seconds` at 20 connections on
 * `/v1/vaults/details`:
 * - cached: the data version changes every second (as with live ingestion), so the API
 *   queries the engine about once a second and answers from its cache otherwise;
 * - uncached: the response cache off, every request queries the engine (the worst case);
 * each quiet, then while `analysts` loops each keep one heavy analyst query (about a second of
 * engine time each) running through the SQL interface. Rows: the p99 of each, and how much the
 * analysts add to it (docs target: at most 200 ms).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp, listen } from '../api/server.ts';
import { startSqlHttp } from '../api/sql/server.ts';
import { parseConfig } from '../core/config.ts';
import { createLogger } from '../core/log.ts';
import { createStore } from '../store/client.ts';
import { type LoadNumbers, load } from './load.ts';
import { benchArgs, row, writeReport } from './report.ts';

const SELF = fileURLToPath(import.meta.url);
const API_BENCH = join(SELF, '..', 'api.ts');
const heavyQuery = (rows: string) => `SELECT sum(cityHash64(number)) FROM numbers(${rows})`;

/** Child role: the API and the SQL interface over `dataDir`; prints both ports. */
async function serve(dataDir: string, cached: boolean): Promise<void> {
  const config = parseConfig({ dataDir, logLevel: 'warn', api: { cache: { enabled: cached } } });
  const store = await createStore(config);
  const started = Date.now();
  const app = createApp({
    store,
    config,
    dataVersion: () => Math.floor((Date.now() - started) / 1000),
    ready: () => true,
  });
  const api = await listen(app, '127.0.0.1', 0);
  const sql = await startSqlHttp({
    store,
    log: createLogger('warn'),
    settings: { ...config.sql, http: { ...config.sql.http, port: 0 } },
  });
  console.log(`PORTS ${(api.address() as AddressInfo).port} ${sql.url}`);
}

function child(args: string[]): Promise<{ proc: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /^(PORTS .*)$/m.exec(out);
      if (m) resolve({ proc, line: m[1] });
    });
    proc.on('exit', (code) =>
      code === 0 ? resolve({ proc, line: out }) : reject(new Error(`${args[1]} exited ${code}`)),
    );
  });
}

async function main(): Promise<void> {
  const { values, size, out } = benchArgs(
    'sql-contention',
    { seconds: undefined, vaults: undefined, holders: undefined, analysts: '2' },
    {
      tiny: { seconds: '3', vaults: '2', holders: '200', heavyRows: '10000000' },
      full: { seconds: '8', vaults: '20', holders: '20000', heavyRows: '400000000' },
    },
  );
  const seconds = Number(values.seconds);
  const analysts = Number(values.analysts);
  const HEAVY = heavyQuery(values.heavyRows);
  const dir = mkdtempSync(join(tmpdir(), 'vs-bench-sql-'));
  const results: Record<string, unknown> = {
    seconds,
    analysts,
    heavyQuery: HEAVY,
    loadavgBefore: loadavg(),
  };
  try {
    await child([API_BENCH, 'generate', dir, values.vaults, values.holders]);
    const modes = size === 'tiny' ? [true] : [true, false];
    for (const cached of modes) {
      const { proc, line } = await child([SELF, 'serve', dir, String(cached)]);
      const [, apiPort, sqlUrl] = line.split(' ');
      const url = `http://127.0.0.1:${apiPort}/v1/vaults/details`;
      const heavy = async () => {
        const t0 = Date.now();
        const res = await fetch(`${sqlUrl}/?query=${encodeURIComponent(HEAVY)}`);
        const text = await res.text();
        // A refused or failed analyst query would measure nothing.
        if (!res.ok) throw new Error(`the analyst query failed: ${res.status} ${text.slice(0, 300)}`);
        return Date.now() - t0;
      };
      // One request first: the first answer loads the vault data (seconds on a loaded machine).
      await (await fetch(url)).arrayBuffer();
      const heavyMs = await heavy();
      const quiet = await load(url, seconds, 20);
      let running = true;
      let analystQueries = 0;
      const loops = Array.from({ length: analysts }, async () => {
        while (running) {
          await heavy();
          analystQueries++;
        }
      });
      const busy = await load(url, seconds, 20);
      running = false;
      await Promise.all(loops);
      proc.kill('SIGKILL');
      results[cached ? 'cached' : 'uncached'] = {
        heavyQueryMs: heavyMs,
        quiet,
        withAnalyst: { ...busy, analystQueries },
      };
      console.log(
        `${cached ? 'cached  ' : 'uncached'}: quiet p50 ${quiet.p50Ms} ms p99 ${quiet.p99Ms} ms ${quiet.requestsPerSecond.toFixed(0)} req/s | ` +
          `${analysts} analyst loops (${heavyMs} ms each, ${analystQueries} ran) p50 ${busy.p50Ms} ms p99 ${busy.p99Ms} ms ${busy.requestsPerSecond.toFixed(0)} req/s`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  results.loadavgAfter = loadavg();
  type Run = { quiet: LoadNumbers; withAnalyst: LoadNumbers };
  const rows = (['cached', 'uncached'] as const).flatMap((mode) => {
    if (!results[mode]) return [];
    const r = results[mode] as Run;
    const what = `/v1/vaults/details p99, ${mode === 'cached' ? 'cache on' : 'cache off'}`;
    // No answer within the run (a loaded machine): the p99 is at least the run's length.
    const p99 = (workload: string, n: LoadNumbers) =>
      n.completed > 0
        ? row(workload, n.p99Ms, 'ms')
        : row(`${workload} (none answered in ${seconds} s)`, seconds * 1000, 'ms', undefined, true, {
            lowerBound: true,
          });
    const rows = [
      p99(`${what}, engine quiet`, r.quiet),
      p99(`${what}, ${analysts} analyst queries looping`, r.withAnalyst),
    ];
    if (r.quiet.completed > 0 && r.withAnalyst.completed > 0)
      rows.push(
        row(
          `${what}, added by ${analysts} analyst queries`,
          r.withAnalyst.p99Ms - r.quiet.p99Ms,
          'ms',
          { text: '<= 200 ms', bound: 200, better: 'lower' },
          size === 'full',
        ),
      );
    return rows;
  });
  writeReport(out, { name: 'sql-contention', size, rows, ...results });
}

const [role, ...rest] = process.argv.slice(2);
if (role === 'serve') await serve(rest[0], rest[1] === 'true');
else await main();
