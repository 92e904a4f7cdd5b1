/**
 * API benchmark: `npx tsx bench/api.ts [--size tiny|full] [--out FILE.json] [--seconds 10]
 * [--rounds 1] [--holders 1000000] [--vaults 50] [--data-dir DIR]` (tiny: 2,000 holders, 5 vaults,
 * 1 s per load; `--data-dir` keeps the generated data there and reuses it on the next run).
 * GET /v1/token-holders has its own benchmark, bench/token-holders.ts, over the same data.
 *
 * 1. A child process writes the data straight into the raw tables of a temp data dir
 *    (INSERT ... SELECT from numbers(), so the materialized views fill as in production):
 *    `vaults` vaults with a year of daily rates, fees and price snapshots, and `holders`
 *    holders minted across two EVM chains and Solana.
 * 2. Throughput: the API runs in a child process; for each endpoint, a bare `node:http`
 *    child serves the very bytes the API answered (body and headers), and autocannon (100
 *    connections, `seconds` each) loads the bare server, then the API, `rounds` times:
 *    requests/s, p50, p99, the API's share of the bare requests/s and its p99 over the bare
 *    p99 per round (the median round is the headline, with the range), and the machine's load
 *    average around each round (the machine is shared: compare within a round).
 *
 * Results (bench/report.ts rows: per endpoint the ratio to the bare server, target ≥ 0.80, and
 * the p99 over the bare p99, target ≤ 2) go to bench/results/api-latest.json. The roles
 * `generate`, `serve` and `bare` are this file run as a child (bench/token-holders.ts runs its
 * `generate` and `serve` too).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HANDLERS } from '../api/handlers/index.ts';
import type { EndpointKey } from '../api/http/responses.ts';
import { createApp, listen } from '../api/server.ts';
import { parseConfig } from '../core/config.ts';
import { createStore, type Store } from '../store/client.ts';
import { migrate } from '../views/migrate.ts';
import { writeServiceSettings } from '../views/settings.ts';
import { settleMetrics } from '../views/settle.ts';
import { load } from './load.ts';
import { benchArgs, round, row, writeReport } from './report.ts';
import { benchAddress, benchRegistryRow, benchSlugSql, benchVaultSql } from './vault-registry.ts';

const SELF = fileURLToPath(import.meta.url);
const DAY = 86_400;

// ---- data --------------------------------------------------------------------------------------

/** Registry, rates, fees, snapshots, activity, watermarks and `holders` mints, straight into the raw tables. */
export async function generate(dataDir: string, vaults: number, holders: number): Promise<void> {
  const config = parseConfig({ dataDir });
  const store = await createStore(config);
  const db = config.store.database;
  await migrate(store, { database: db, cluster: '' });
  const now = Math.floor(Date.now() / 1000);
  const yearAgo = Math.floor(now / DAY) * DAY - 365 * DAY;
  const usdc = benchAddress(1, 0xc0ffee);
  await store.insert(
    'registry_raw',
    Array.from({ length: vaults }, (_, i) => {
      const mint = i % 5 === 0 ? `Mint${String(i).padStart(40, 'Z')}` : '';
      const solana = {
        mintAddress: mint,
        oftStoreAddress: '',
        composerAddress: '',
        decimals: 6,
        startBlock: 0,
      };
      return benchRegistryRow(i, { chainIds: [98866, 1], usdc, mint, vault: mint ? { solana } : {} });
    }),
  );
  // Per vault: a slug index `v`, its EVM address and (every fifth vault) a Solana mint.
  const slug = benchSlugSql;
  const evm = benchVaultSql;
  const mint = (v: string) => `concat('Mint', leftPad(toString(${v}), 40, 'Z'))`;
  const chainCols = (chain: string, t: string, n: string) =>
    `concat(toString(${chain}), ':0x', lower(hex(${n})), ':0') AS event_id, ${chain} AS chain_id, ${n} AS block_number,
     concat('0x', lower(hex(${n}))) AS block_hash, toDateTime(${t}, 'UTC') AS block_time,
     concat('0x', lower(hex(${n}))) AS tx_hash, 0 AS log_index, 0 AS removed, 1 AS ver, ${slug('v')} AS vault`;
  const sql = (s: string) => store.command(s);
  // One mint per holder: every fifth vault also on Solana (chain 101), the rest on 98866 or 1.
  await sql(`INSERT INTO ${db}.transfers_raw
    (event_id, chain_id, block_number, block_hash, block_time, tx_hash, log_index, removed, ver, vault, token,
     from_address, to_address, amount)
    SELECT ${chainCols('chain', `${yearAgo} + intDiv(number * ${365 * DAY}, ${holders})`, 'number')},
      if(chain = 101, ${mint('v')}, ${evm('v')}) AS token,
      if(chain = 101, '11111111111111111111111111111111', '0x0000000000000000000000000000000000000000') AS from_address,
      if(chain = 101, concat('So', leftPad(toString(number), 42, 'A')), concat('0x', leftPad(lower(hex(number + 1)), 40, '0'))) AS to_address,
      toUInt256((number % 100000 + 1) * 1000000) AS amount
    FROM (SELECT number, number % ${vaults} AS v,
            multiIf(v % 5 = 0 AND number % 3 = 0, 101, number % 2 = 0, 98866, 1) AS chain FROM numbers(${holders}))`);
  const daily = `(SELECT number AS d, v FROM numbers(365) ARRAY JOIN range(${vaults}) AS v)`;
  await sql(`INSERT INTO ${db}.rates_raw (event_id, chain_id, block_number, block_hash, block_time, tx_hash, log_index,
      removed, ver, vault, accountant, rate, rate_decimals, source, is_paused)
    SELECT ${chainCols('98866', `${yearAgo} + d * ${DAY} + 3600`, `10000000 + d * 1000 + v`)},
      '0xacc', toUInt256(1000000 + d * 150 + v), 6, 'EVENT', 0 FROM ${daily}`);
  await sql(`INSERT INTO ${db}.fees_raw (event_id, chain_id, block_number, block_hash, block_time, tx_hash, log_index,
      removed, ver, vault, kind, token, amount, decimals, usd_price, usd_e18)
    SELECT ${chainCols('98866', `${yearAgo} + d * ${DAY} + 7200`, `20000000 + d * 1000 + v`)},
      ['MANAGEMENT', 'PERFORMANCE', 'CLAIMED'][d % 3 + 1], '0xfee', toUInt256(1000000 + d), 6, 1,
      toInt256(1000000 + d) * toInt256('1000000000000') FROM ${daily}`);
  await sql(`INSERT INTO ${db}.activity_raw (event_id, chain_id, block_number, block_hash, block_time, tx_hash, log_index,
      removed, ver, vault, kind, user, shares, shares_token, assets, assets_token, assets_decimals)
    SELECT ${chainCols('98866', `${yearAgo} + d * ${DAY} + 600`, `30000000 + d * 1000 + v`)},
      'DEPOSIT', '0x0000000000000000000000000000000000000001', toUInt256(1000000), ${evm('v')},
      toUInt256(1000000), '0xc0ffee', 6 FROM ${daily}`);
  await sql(`INSERT INTO ${db}.snapshots_raw (vault, chain_id, block_number, ts, kind, token, amount, decimals, usd_price,
      apy7d, apy30d, weight, is_paused)
    SELECT ${slug('v')}, 98866, d, toDateTime(${yearAgo} + d * ${DAY} + 3000, 'UTC'), k.1, k.2,
      toUInt256(1000000000000), 6, 1, 4.5, 4.7, 50, 0
    FROM ${daily} ARRAY JOIN [('ASSET_BALANCE', '${usdc}'), ('COMPOSITION', 'tbill')] AS k`);
  await sql(`INSERT INTO ${db}.blocks_raw (chain_id, block_number, block_hash, parent_hash, block_time, removed, ver)
    SELECT c, 90000000, concat('0xb', toString(c)), '0x1', toDateTime(${now - 60}, 'UTC'), 0, 1
    FROM (SELECT arrayJoin([98866, 1, 101]) AS c)`);
  // The metrics tables the vault endpoints read (the streams role settles them as batches land).
  await writeServiceSettings(store, { primaryChainId: config.mintFlow.primaryChainId });
  await settleMetrics(store);
  await store.close();
}

// ---- processes ---------------------------------------------------------------------------------

/**
 * The API over `dataDir` on 127.0.0.1:0 (as `vaultstream start` builds it); prints `PORT <n>` and its RSS before and after the
 * engine loaded. SIGUSR2 bumps the data version, as a landed batch does.
 */
async function serve(dataDir: string): Promise<void> {
  const nodeMb = memory(process.pid).rssMb;
  const config = parseConfig({ dataDir, logLevel: 'warn' });
  const store: Store = await createStore(config);
  await store.query('SELECT 1');
  const engineMb = memory(process.pid).rssMb;
  let version = 1;
  process.on('SIGUSR2', () => version++);
  const app = createApp({ store, config, dataVersion: () => version, ready: () => true });
  const server = await listen(app, '127.0.0.1', 0);
  console.log(`RSS ${nodeMb.toFixed(0)} ${engineMb.toFixed(0)}`);
  console.log(`PORT ${(server.address() as AddressInfo).port}`);
}

/**
 * A bare node:http server answering every request with the bytes of `file` and the headers of
 * `headersFile` (the API's own answer's: status line, headers and body the same bytes, so the
 * load generator parses the same responses from both).
 */
function bare(file: string, headersFile: string): void {
  const body = readFileSync(file);
  const headers = { ...JSON.parse(readFileSync(headersFile, 'utf8')), 'content-length': body.length };
  const server = http.createServer((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
  server.listen(0, '127.0.0.1', () => console.log(`PORT ${(server.address() as AddressInfo).port}`));
}

/**
 * Runs this file as `role` in a child (with Node flags `nodeArgs`); resolves once the child
 * prints its port (or exits, for `generate`).
 */
export function child(
  role: string,
  args: string[],
  nodeArgs: string[] = [],
): Promise<{ proc: ChildProcess; port: number; out: () => string }> {
  const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', SELF, role, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'warn' },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve({ proc, port: Number(m[1]), out: () => out });
    });
    proc.once('exit', (code) =>
      code === 0 && role === 'generate'
        ? resolve({ proc, port: 0, out: () => '' })
        : reject(new Error(`${role} exited ${code}`)),
    );
  });
}

export function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

/** VmRSS and VmHWM (peak) of `pid`, in MB. */
export function memory(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

// ---- measurements ------------------------------------------------------------------------------

/** The API against a bare server sending the same bytes, for `path`, `rounds` times (bare, then API). */
async function compare(apiPort: number, path: string, seconds: number, rounds: number, dir: string) {
  const res = await fetch(`http://127.0.0.1:${apiPort}${path}`, {
    headers: { 'accept-encoding': 'identity' },
  });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  const file = join(dir, 'body');
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  // Node adds these per connection and response, for the bare server as for the API.
  const perResponse = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);
  const headers = Object.fromEntries([...res.headers].filter(([k]) => !perResponse.has(k)));
  const headersFile = join(dir, 'headers.json');
  writeFileSync(headersFile, JSON.stringify(headers));
  const b = await child('bare', [file, headersFile]);
  try {
    const runs = [];
    for (let i = 0; i < rounds; i++) {
      const loadBefore = loadavg()[0];
      const bareNumbers = await load(`http://127.0.0.1:${b.port}${path}`, seconds);
      const apiNumbers = await load(`http://127.0.0.1:${apiPort}${path}`, seconds);
      runs.push({
        bare: bareNumbers,
        api: apiNumbers,
        ratioToBare: apiNumbers.requestsPerSecond / bareNumbers.requestsPerSecond,
        p99OverBare: apiNumbers.p99Ms / Math.max(1, bareNumbers.p99Ms),
        loadAverage1m: [loadBefore, loadavg()[0]],
      });
    }
    const median = [...runs].sort((x, y) => x.ratioToBare - y.ratioToBare)[Math.floor((runs.length - 1) / 2)];
    return {
      path,
      bytes: readFileSync(file).length,
      ...median,
      ratioRange: [Math.min(...runs.map((r) => r.ratioToBare)), Math.max(...runs.map((r) => r.ratioToBare))],
      rounds: runs,
    };
  } finally {
    await stop(b.proc);
  }
}

async function main(): Promise<void> {
  const { values, size, out } = benchArgs(
    'api',
    { seconds: undefined, rounds: '1', holders: undefined, vaults: undefined, 'data-dir': undefined },
    {
      tiny: { seconds: '1', holders: '2000', vaults: '5' },
      full: { seconds: '10', holders: '1000000', vaults: '50' },
    },
  );
  const seconds = Number(values.seconds);
  const rounds = Math.max(1, Number(values.rounds));
  const holders = Number(values.holders);
  const vaults = Number(values.vaults);
  const dir = mkdtempSync(join(tmpdir(), 'vs-bench-api-'));
  const dataDir = values['data-dir'] ?? join(dir, 'data');
  try {
    const g0 = performance.now();
    const reuse = values['data-dir'] !== undefined && existsSync(dataDir);
    if (!reuse) await child('generate', [dataDir, String(vaults), String(holders)]);
    const generateSeconds = reuse ? null : (performance.now() - g0) / 1000;

    const loadStart = loadavg();
    const api = await child('serve', [dataDir]);
    const wanted: [EndpointKey, string][] = [
      ['GET /vaults/details', '/v1/vaults/details'],
      [
        'GET /vaults/{slug}/details-lite',
        `/v1/vaults/bench-${String(Math.min(7, vaults - 1)).padStart(2, '0')}/details-lite`,
      ],
      ['GET /vaults/holders', '/v1/vaults/holders'],
      ['GET /vaults/fees', '/v1/vaults/fees'],
    ];
    const missing = wanted.filter(([k]) => !HANDLERS[k]).map(([k]) => k);
    const throughput = [];
    try {
      for (const [key, path] of wanted)
        if (HANDLERS[key]) throughput.push(await compare(api.port, path, seconds, rounds, dir));
    } finally {
      await stop(api.proc);
    }

    const rows = throughput.flatMap((t) => [
      row(
        `${t.path}: req/s as a share of a bare node:http server`,
        round(t.ratioToBare, 3),
        'ratio',
        {
          text: '≥ 0.80',
          bound: 0.8,
          better: 'higher',
        },
        true,
        {
          apiRequestsPerSecond: Math.round(t.api.requestsPerSecond),
          bareRequestsPerSecond: Math.round(t.bare.requestsPerSecond),
          ratioRange: t.ratioRange.map((r) => round(r, 3)),
        },
      ),
      row(
        `${t.path}: p99 over the bare server's p99`,
        round(t.p99OverBare, 3),
        'ratio',
        {
          text: '≤ 2',
          bound: 2,
          better: 'lower',
        },
        true,
        { apiP99Ms: t.api.p99Ms, bareP99Ms: t.bare.p99Ms },
      ),
    ]);
    writeReport(out, {
      name: 'api',
      size,
      rows,
      node: process.version,
      note: `Shared ${cpus().length}-core machine: the load generator, the server and other work compete for the cores; loadAverage1m is the machine's around each round.`,
      loadAverage: { start: loadStart, end: loadavg() },
      dataset: { vaults, holders, historyDays: 365, generateSeconds },
      seconds,
      rounds,
      missingHandlers: missing,
      throughput,
    });
    console.table(
      throughput.map((t) => ({
        path: t.path,
        'bare req/s': Math.round(t.bare.requestsPerSecond),
        'api req/s': Math.round(t.api.requestsPerSecond),
        ratio: t.ratioToBare.toFixed(2),
        'ratio range': t.ratioRange.map((r) => r.toFixed(2)).join('–'),
        'api p50 ms': t.api.p50Ms,
        'bare p99 ms': t.bare.p99Ms,
        'api p99 ms': t.api.p99Ms,
      })),
    );
    if (missing.length) console.log('not measured (no handler yet):', missing.join(', '));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run as a script or as one of its child roles; imported (bench/token-holders.ts), nothing runs.
if (process.argv[1] && resolve(process.argv[1]) === SELF) {
  const [role, ...rest] = process.argv.slice(2);
  if (role === 'generate') await generate(rest[0], Number(rest[1]), Number(rest[2]));
  else if (role === 'serve') await serve(rest[0]);
  else if (role === 'bare') bare(rest[0], rest[1]);
  else await main();
}
