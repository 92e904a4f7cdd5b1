/**
 * API benchmark: `npx tsx bench/api.ts [--seconds 10] [--rounds 1] [--holders 1000000] [--vaults 50]
 * [--only token-holders] [--data-dir DIR]` (`--data-dir` keeps the generated data there and
 * reuses it on the next run).
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
 * 3. GET /v1/token-holders in a fresh API child (which builds the shared snapshot as it
 *    starts): the first request right after start, a second one of the same version, one
 *    while the snapshot of a new data version builds (SIGUSR2 bumps the child's version)
 *    and the first one of the new version: time to first byte, total time, bytes, the
 *    version served, and the child's RSS (VmHWM peak; VmRSS sampled every 20 ms), with
 *    the child's RSS before and after the engine loads and the machine's load average.
 *
 * Results go to bench/results/api-latest.json. The roles `generate`, `serve` and `bare`
 * are this file run as a child.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HANDLERS } from '../api/handlers/index.ts';
import type { EndpointKey } from '../api/http/responses.ts';
import { createApp, listen } from '../api/server.ts';
import { parseConfig, vaultSchema } from '../core/config.ts';
import { createStore, type Store } from '../store/client.ts';
import { migrate } from '../views/migrate.ts';
import { load } from './load.ts';

const SELF = fileURLToPath(import.meta.url);
const DAY = 86_400;

// ---- data --------------------------------------------------------------------------------------

/** Registry, rates, fees, snapshots, activity, watermarks and `holders` mints, straight into the raw tables. */
async function generate(dataDir: string, vaults: number, holders: number): Promise<void> {
  const config = parseConfig({ dataDir });
  const store = await createStore(config);
  const db = config.store.database;
  await migrate(store, { database: db, cluster: '' });
  const now = Math.floor(Date.now() / 1000);
  const yearAgo = Math.floor(now / DAY) * DAY - 365 * DAY;
  const address = (i: number, base: number) => `0x${(base + i).toString(16).padStart(40, '0')}`;
  await store.insert(
    'registry_raw',
    Array.from({ length: vaults }, (_, i) => {
      const slug = `bench-${String(i).padStart(2, '0')}`;
      const mint = i % 5 === 0 ? `Mint${String(i).padStart(40, 'Z')}` : '';
      const info = vaultSchema.parse({
        slug,
        name: `Bench ${i}`,
        symbol: `B${i}`,
        decimals: 6,
        vaultAddress: address(i, 0x7a0000),
        accountantAddress: address(i, 0xacc000),
        chainIds: [98866, 1],
        chain: {
          primary: { startBlock: 0, accountantType: 'hub' },
          mainnet: { startBlock: 0, accountantType: 'spoke' },
        },
        ...(mint && {
          solana: { mintAddress: mint, oftStoreAddress: '', composerAddress: '', decimals: 6, startBlock: 0 },
        }),
        liquidAssets: [
          { contractAddress: address(1, 0xc0ffee), symbol: 'USDC', decimals: 6, chainId: 98866 },
        ],
      });
      return {
        slug,
        status: 'active',
        updated_at: '2026-01-01 00:00:00.000',
        vault_address: info.vaultAddress,
        name: info.name,
        symbol: info.symbol,
        decimals: 6,
        chain_ids: info.chainIds,
        solana_mint: mint,
        base_asset_usd_price: '1',
        base_asset_decimals: 6,
        info: JSON.stringify(info),
      };
    }),
  );
  // Per vault: a slug index `v`, its EVM address and (every fifth vault) a Solana mint.
  const slug = (v: string) => `concat('bench-', leftPad(toString(${v}), 2, '0'))`;
  const evm = (v: string) => `concat('0x', leftPad(lower(hex(${0x7a0000} + ${v})), 40, '0'))`;
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
    FROM ${daily} ARRAY JOIN [('ASSET_BALANCE', '${address(1, 0xc0ffee)}'), ('COMPOSITION', 'tbill')] AS k`);
  await sql(`INSERT INTO ${db}.blocks_raw (chain_id, block_number, block_hash, parent_hash, block_time, removed, ver)
    SELECT c, 90000000, concat('0xb', toString(c)), '0x1', toDateTime(${now - 60}, 'UTC'), 0, 1
    FROM (SELECT arrayJoin([98866, 1, 101]) AS c)`);
  await store.close();
}

// ---- processes ---------------------------------------------------------------------------------

/**
 * The API over `dataDir` on 127.0.0.1:0; prints `PORT <n>` and its RSS before and after the
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

/** Runs this file as `role` in a child; resolves once the child prints its port (or exits, for `generate`). */
function child(
  role: string,
  args: string[],
): Promise<{ proc: ChildProcess; port: number; out: () => string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', SELF, role, ...args], {
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

function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

/** VmRSS and VmHWM (peak) of `pid`, in MB. */
function memory(pid: number): { rssMb: number; peakMb: number } {
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

const PREFIX_BYTES = '{"data":{"holders":['.length;

/** GET /v1/token-holders once: time to first byte and to the end, bytes, rows, version, server memory. */
async function tokenHoldersOnce(port: number, pid: number) {
  const before = memory(pid);
  let sampledMaxMb = before.rssMb;
  const timer = setInterval(() => {
    sampledMaxMb = Math.max(sampledMaxMb, memory(pid).rssMb);
  }, 20);
  const t0 = performance.now();
  const out = await new Promise<{
    ttfbMs: number;
    firstRowsMs: number;
    totalMs: number;
    bytes: number;
    tail: string;
    status: number;
    version: string;
    stale: boolean;
  }>((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${port}/v1/token-holders`, (res) => {
        let ttfbMs = -1;
        let firstRowsMs = -1;
        let bytes = 0;
        let tail = '';
        res.on('data', (chunk: Buffer) => {
          if (ttfbMs < 0) ttfbMs = performance.now() - t0;
          bytes += chunk.length;
          // The first chunk may be the bare `{"data":{"holders":[` prefix, before any row is read.
          if (firstRowsMs < 0 && bytes > PREFIX_BYTES) firstRowsMs = performance.now() - t0;
          tail = (tail + chunk.toString('latin1')).slice(-200);
        });
        res.on('end', () =>
          resolve({
            ttfbMs,
            firstRowsMs,
            totalMs: performance.now() - t0,
            bytes,
            tail,
            status: res.statusCode ?? 0,
            version: String(res.headers['x-data-version']),
            stale: res.headers['x-snapshot-stale'] === '1',
          }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
  clearInterval(timer);
  const after = memory(pid);
  return {
    status: out.status,
    count: Number(/"count":(\d+)/.exec(out.tail)?.[1] ?? -1),
    version: out.version,
    stale: out.stale,
    ttfbMs: Math.round(out.ttfbMs),
    firstRowsMs: Math.round(out.firstRowsMs),
    totalMs: Math.round(out.totalMs),
    bytes: out.bytes,
    serverRssBeforeMb: Math.round(before.rssMb),
    serverRssSampledMaxMb: Math.round(Math.max(sampledMaxMb, after.rssMb)),
    serverPeakRssMb: Math.round(after.peakMb),
    loadAverage1m: loadavg()[0],
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * GET /v1/token-holders in a fresh API child: right after start (waits for the first
 * build), again (shared snapshot), while a new version builds (the previous snapshot),
 * and once the new version's snapshot is in.
 */
async function tokenHolders(dataDir: string) {
  const th = await child('serve', [dataDir]);
  try {
    const [nodeMb, engineMb] = (/RSS (\d+) (\d+)/.exec(th.out()) ?? []).slice(1).map(Number);
    const pid = th.proc.pid!;
    const first = await tokenHoldersOnce(th.port, pid);
    const again = await tokenHoldersOnce(th.port, pid);
    th.proc.kill('SIGUSR2');
    // The version is polled every second; a build starts at most every 5 s.
    await sleep(1500);
    const duringRebuild = await tokenHoldersOnce(th.port, pid);
    let next = await tokenHoldersOnce(th.port, pid);
    for (let i = 0; i < 120 && next.version === first.version; i++) {
      await sleep(500);
      next = await tokenHoldersOnce(th.port, pid);
    }
    const idle = memory(pid);
    return {
      serverRssNodeOnlyMb: nodeMb,
      serverRssEngineLoadedMb: engineMb,
      serverRssIdleAfterMb: Math.round(idle.rssMb),
      first,
      again,
      duringRebuild,
      newVersion: next,
    };
  } finally {
    await stop(th.proc);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '1' },
      holders: { type: 'string', default: '1000000' },
      vaults: { type: 'string', default: '50' },
      only: { type: 'string' },
      'data-dir': { type: 'string' },
    },
  });
  if (values.only !== undefined && values.only !== 'token-holders')
    throw new Error(`--only: token-holders is the one part that runs alone, not ${values.only}`);
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

    // Token holders first, in a fresh server: its memory is not the other endpoints' caches.
    const token = await tokenHolders(dataDir);
    if (values.only) {
      const outDir = join(import.meta.dirname, 'results');
      mkdirSync(outDir, { recursive: true });
      const result = { date: new Date().toISOString(), dataset: { vaults, holders }, tokenHolders: token };
      writeFileSync(join(outDir, 'api-token-holders-latest.json'), `${JSON.stringify(result, null, 2)}\n`);
      console.log('token-holders', JSON.stringify(token, null, 2));
      return;
    }

    const loadStart = loadavg();
    const api = await child('serve', [dataDir]);
    const wanted: [EndpointKey, string][] = [
      ['GET /vaults/details', '/v1/vaults/details'],
      ['GET /vaults/{slug}/details-lite', '/v1/vaults/bench-07/details-lite'],
      ['GET /vaults/holders', '/v1/vaults/holders'],
      ['GET /vaults/fees', '/v1/vaults/fees'],
    ];
    const missing = wanted.filter(([k]) => !HANDLERS[k]).map(([k]) => k);
    const throughput = [];
    for (const [key, path] of wanted)
      if (HANDLERS[key]) throughput.push(await compare(api.port, path, seconds, rounds, dir));
    await stop(api.proc);

    const results = {
      date: new Date().toISOString(),
      node: process.version,
      note: `Shared ${cpus().length}-core machine: the load generator, the server and other work compete for the cores; loadAverage1m is the machine's around each round.`,
      loadAverage: { start: loadStart, end: loadavg() },
      dataset: { vaults, holders, historyDays: 365, generateSeconds },
      seconds,
      rounds,
      targets: {
        ratioToBare: 0.8,
        p99OverBare: 2,
        p99Ms: 20,
        tokenHoldersTtfbMs: 1000,
        tokenHoldersPeakRssMb: 300,
      },
      missingHandlers: missing,
      throughput,
      tokenHolders: token,
    };
    const outDir = join(import.meta.dirname, 'results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'api-latest.json'), `${JSON.stringify(results, null, 2)}\n`);
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
    console.log('token-holders', token);
    if (missing.length) console.log('not measured (no handler yet):', missing.join(', '));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const [role, ...rest] = process.argv.slice(2);
if (role === 'generate') await generate(rest[0], Number(rest[1]), Number(rest[2]));
else if (role === 'serve') await serve(rest[0]);
else if (role === 'bare') bare(rest[0], rest[1]);
else await main();
