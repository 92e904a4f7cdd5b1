/**
 * GET /v1/token-holders benchmark: `npx tsx bench/token-holders.ts [--size tiny|full]
 * [--out FILE.json] [--holders 1000000] [--vaults 50] [--streams 3] [--data-dir DIR] [--node-args '...']`
 * (tiny: 2,000 holders, 5 vaults; `--data-dir` keeps the generated data there and reuses it).
 *
 * The data is bench/api.ts's (its `generate` role). The API runs in a fresh child (bench/api.ts's
 * `serve` role, with the Node flags `npm start` uses), which starts building the shared snapshot
 * as it starts; then, one request at a time:
 * - the first request right after the child listens: time to the first byte and to the first
 *   rows (the first byte past the `{"data":{"holders":[` prefix), and to the end;
 * - `streams` more requests of the same version (the snapshot exists): whole-stream seconds;
 * - two at once (the bytes are shared);
 * - one while the snapshot of a new data version builds (SIGUSR2 bumps the child's version)
 *   and the first one of the new version.
 * Memory is the child's: RSS before the engine loads, after (idle: nothing built yet), sampled
 * every 20 ms, and its peak (VmHWM) at the end. The targets (full size): the whole stream
 * ≤ 2 s once the snapshot exists, first byte ≤ 3 s after start, peak RSS ≤ idle + 150 MB.
 * Results: bench/results/token-holders-latest.json (bench/report.ts rows).
 */

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { child, memory, stop } from './api.ts';
import { benchArgs, round, row, writeReport } from './report.ts';

/** As `npm start` and bin/vaultstream.mjs run the service (`--node-args` replaces them). */
const SERVICE_NODE_ARGS = '--max-semi-space-size=16';

const PREFIX_BYTES = '{"data":{"holders":['.length;

interface Stream {
  status: number;
  count: number;
  version: string;
  stale: boolean;
  ttfbMs: number;
  firstRowsMs: number;
  totalMs: number;
  bytes: number;
  /** The server's CPU seconds (every thread, the engine's too) during the request: steadier than wall time on a loaded machine. */
  serverCpuS: number;
  /** The server's peak RSS (VmHWM) so far, at the end of the request, MB. */
  serverPeakSoFarMb: number;
}

/** CPU seconds (user + system, every thread) of `pid` so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** GET /v1/token-holders once, reading the body as fast as it comes. */
function getOnce(port: number, pid: number): Promise<Stream> {
  const t0 = performance.now();
  const cpu0 = cpuSeconds(pid);
  return new Promise((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${port}/v1/token-holders`, (res) => {
        let ttfbMs = -1;
        let firstRowsMs = -1;
        let bytes = 0;
        let tail = '';
        res.on('data', (chunk: Buffer) => {
          if (ttfbMs < 0) ttfbMs = performance.now() - t0;
          bytes += chunk.length;
          if (firstRowsMs < 0 && bytes > PREFIX_BYTES) firstRowsMs = performance.now() - t0;
          tail = (tail + chunk.subarray(-200).toString('latin1')).slice(-200);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            count: Number(/"count":(\d+)/.exec(tail)?.[1] ?? -1),
            version: String(res.headers['x-data-version']),
            stale: res.headers['x-snapshot-stale'] === '1',
            ttfbMs: Math.round(ttfbMs),
            firstRowsMs: Math.round(firstRowsMs),
            totalMs: Math.round(performance.now() - t0),
            bytes,
            serverCpuS: Math.round((cpuSeconds(pid) - cpu0) * 100) / 100,
            serverPeakSoFarMb: Math.round(memory(pid).peakMb),
          }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function measure(dataDir: string, streams: number, nodeArgs: string[]) {
  const t0 = performance.now();
  const th = await child('serve', [dataDir], nodeArgs);
  const listeningMs = Math.round(performance.now() - t0);
  const pid = th.proc.pid as number;
  let sampledMaxMb = 0;
  const sampler = setInterval(() => {
    sampledMaxMb = Math.max(sampledMaxMb, memory(pid).rssMb);
  }, 20);
  try {
    const [nodeMb, engineMb] = (/RSS (\d+) (\d+)/.exec(th.out()) ?? []).slice(1).map(Number);
    const first = await getOnce(th.port, pid);
    const again: Stream[] = [];
    for (let i = 0; i < streams; i++) again.push(await getOnce(th.port, pid));
    const concurrent = await Promise.all([getOnce(th.port, pid), getOnce(th.port, pid)]);
    th.proc.kill('SIGUSR2');
    // The version is polled every second; a build starts at most every 5 s.
    await sleep(1500);
    const duringRebuild = await getOnce(th.port, pid);
    let next = await getOnce(th.port, pid);
    for (let i = 0; i < 240 && next.version === first.version; i++) {
      await sleep(250);
      next = await getOnce(th.port, pid);
    }
    const end = memory(pid);
    return {
      listeningMs,
      serverRssNodeOnlyMb: nodeMb,
      serverRssIdleMb: engineMb,
      serverRssSampledMaxMb: Math.round(Math.max(sampledMaxMb, end.rssMb)),
      serverPeakRssMb: Math.round(end.peakMb),
      serverRssEndMb: Math.round(end.rssMb),
      first,
      again,
      concurrent,
      duringRebuild,
      newVersion: next,
    };
  } finally {
    clearInterval(sampler);
    await stop(th.proc);
  }
}

async function main(): Promise<void> {
  const { values, size, out } = benchArgs(
    'token-holders',
    {
      holders: undefined,
      vaults: undefined,
      streams: '3',
      'data-dir': undefined,
      'node-args': SERVICE_NODE_ARGS,
    },
    { tiny: { holders: '2000', vaults: '5' }, full: { holders: '1000000', vaults: '50' } },
  );
  const holders = Number(values.holders);
  const vaults = Number(values.vaults);
  const dir = mkdtempSync(join(tmpdir(), 'vs-bench-th-'));
  const dataDir = values['data-dir'] ?? join(dir, 'data');
  try {
    const reuse = values['data-dir'] !== undefined && existsSync(dataDir);
    if (!reuse) await child('generate', [dataDir, String(vaults), String(holders)]);
    const loadStart = loadavg()[0];
    const nodeArgs = values['node-args'].split(' ').filter(Boolean);
    const m = await measure(dataDir, Math.max(1, Number(values.streams)), nodeArgs);
    const bad = [m.first, ...m.again, ...m.concurrent, m.duringRebuild, m.newVersion].find(
      (s) => s.status !== 200 || s.count < 0,
    );
    if (bad) throw new Error(`token-holders: a request failed: ${JSON.stringify(bad)}`);
    const full = size === 'full';
    const wholeS = Math.max(...m.again.map((s) => s.totalMs)) / 1000;
    const overIdle = m.serverPeakRssMb - m.serverRssIdleMb;
    const rows = [
      row(
        'whole stream once the snapshot exists (slowest of the sequential streams)',
        round(wholeS, 3),
        's',
        {
          text: '≤ 2 s',
          bound: 2,
          better: 'lower',
        },
        full,
        { streamsMs: m.again.map((s) => s.totalMs), bytes: m.first.bytes, count: m.first.count },
      ),
      row(
        'first request after start: first rows',
        round(m.first.firstRowsMs / 1000, 3),
        's',
        {
          text: '≤ 3 s',
          bound: 3,
          better: 'lower',
        },
        full,
        { ttfbMs: m.first.ttfbMs, totalMs: m.first.totalMs, listeningMs: m.listeningMs },
      ),
      row(
        'peak RSS over idle (engine loaded)',
        overIdle,
        'MB',
        {
          text: '≤ 150 MB',
          bound: 150,
          better: 'lower',
        },
        full,
        { idleMb: m.serverRssIdleMb, peakMb: m.serverPeakRssMb, sampledMaxMb: m.serverRssSampledMaxMb },
      ),
      row(
        'server CPU per stream once the snapshot exists (median)',
        median(m.again.map((s) => s.serverCpuS)),
        'CPU-s',
      ),
      row('first request after start: server CPU to the end', m.first.serverCpuS, 'CPU-s'),
      row(
        'two streams at once: the slower',
        round(Math.max(...m.concurrent.map((s) => s.totalMs)) / 1000, 3),
        's',
      ),
      row(
        'while the next version builds: whole stream',
        round(m.duringRebuild.totalMs / 1000, 3),
        's',
        undefined,
        true,
        {
          stale: m.duringRebuild.stale,
        },
      ),
    ];
    writeReport(out, {
      name: 'token-holders',
      size,
      rows,
      node: process.version,
      note: "Shared 2-core machine: loadAverage1m is the machine's at the start and the end of the run.",
      loadAverage1m: [loadStart, loadavg()[0]],
      dataset: { vaults, holders },
      serviceNodeArgs: nodeArgs,
      tokenHolders: m,
    });
    console.table(
      rows.map((r) => ({
        workload: r.workload,
        value: r.value,
        unit: r.unit,
        target: r.target,
        meets: r.meets,
      })),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
