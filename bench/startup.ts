/**
 * Startup latency of the CLI, compiled (dist/, scripts/build.mjs) vs the TypeScript sources through
 * tsx: `vaultstream --help`, `--version` and `sql "SELECT 1"` on an empty temp data directory, each
 * run as a fresh process through bin/vaultstream.mjs (VAULTSTREAM_RUNTIME=compiled|tsx), the two
 * runtimes interleaved so that load on the machine hits both alike. Prints min/median/max per
 * command and reports the compiled medians against the targets (`--help` ≤ 0.5 s,
 * `sql "SELECT 1"` ≤ 1.5 s). `--size tiny`: one run of each command, compiled only, no warm-up,
 * and the build only when dist/ is stale.
 *
 * `--before <dir>` adds a third column: the bin/vaultstream.mjs of another checkout (e.g. a clone at
 * the commit before the build step, sharing this node_modules), run as it is.
 *
 * Then `npm start` as on a fresh clone (bench/start-ready.ts: the default config, the devnet and its
 * 45 days of history, an empty data directory), spawn to the first `/readyz` 200, `--ready-runs`
 * times (target ≤ 30 s); tiny: once with one day of history.
 *
 *   npx tsx bench/startup.ts [--size tiny|full] [--out FILE.json] [--runs 7] [--ready-runs 3] [--before /tmp/before]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, round, row, type Target, writeReport } from './report.ts';
import { startUntilReady } from './start-ready.ts';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'vaultstream.mjs');
const { values, size, out } = benchArgs(
  'startup',
  { runs: undefined, before: undefined, 'ready-runs': undefined },
  { tiny: { runs: '1', 'ready-runs': '1' }, full: { runs: '7', 'ready-runs': '3' } },
);
const RUNS = Number(values.runs);
const BEFORE = values.before as string | undefined;
const tiny = size === 'tiny';

type Runtime = 'compiled' | 'tsx' | 'before';
const runtimes: Runtime[] = tiny
  ? ['compiled']
  : BEFORE
    ? ['compiled', 'tsx', 'before']
    : ['compiled', 'tsx'];

const dataDir = mkdtempSync(join(tmpdir(), 'vaultstream-startup-'));
const commands: { name: string; args: string[]; expect: RegExp }[] = [
  { name: '--help', args: ['--help'], expect: /Usage: vaultstream/ },
  { name: '--version', args: ['--version'], expect: /^\d+\.\d+\.\d+/ },
  { name: 'sql "SELECT 1"', args: ['sql', 'SELECT 1', '--format', 'csv'], expect: /^1\s*$/m },
];

// The compiled runs measure the current sources.
execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), ...(tiny ? ['--if-stale'] : [])], {
  stdio: ['ignore', 2, 2],
});

function once(runtime: Runtime, args: string[], expect: RegExp): number {
  const t0 = process.hrtime.bigint();
  const before = runtime === 'before' && BEFORE;
  const r = spawnSync(process.execPath, [before ? join(BEFORE, 'bin', 'vaultstream.mjs') : BIN, ...args], {
    cwd: before ? BEFORE : ROOT,
    env: {
      ...process.env,
      VAULTSTREAM_RUNTIME: before ? 'auto' : runtime,
      VAULTSTREAM_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    encoding: 'utf8',
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0 || !expect.test(r.stdout))
    throw new Error(`${runtime} ${args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return ms;
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  const r = (x: number) => Math.round(x);
  return { minMs: r(s[0]), medianMs: r(median), maxMs: r(s[s.length - 1]), runsMs: xs.map(r) };
};

const loadBefore = loadavg();
const results: Record<string, Partial<Record<Runtime, ReturnType<typeof stats>>>> = {};
try {
  for (const { name, args, expect } of commands) {
    const times: Record<Runtime, number[]> = { compiled: [], tsx: [], before: [] };
    // One warm-up each (the OS file cache, tsx's compile cache, chDB's data directory).
    if (!tiny) for (const rt of runtimes) once(rt, args, expect);
    for (let i = 0; i < RUNS; i++)
      for (const rt of i % 2 ? [...runtimes].reverse() : runtimes) times[rt].push(once(rt, args, expect));
    results[name] = Object.fromEntries(runtimes.map((rt) => [rt, stats(times[rt])]));
    const cols = runtimes.map(
      (rt) => `${rt} min ${results[name][rt]?.minMs} ms, median ${results[name][rt]?.medianMs} ms`,
    );
    console.error(`${name.padEnd(16)} ${cols.join(' | ')}`);
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}

// npm start on a fresh clone: spawn to /readyz 200 (with --before, that checkout's too, interleaved).
const readyMs: number[] = [];
const readyBeforeMs: number[] = [];
for (let i = 0; i < Number(values['ready-runs']); i++) {
  for (const root of BEFORE ? [undefined, BEFORE] : [undefined]) {
    const svc = await startUntilReady(tiny ? { VAULTSTREAM__devnet__backfillDays: '1' } : {}, 300_000, root);
    await svc.stop();
    (root ? readyBeforeMs : readyMs).push(svc.readyMs);
    console.error(`npm start ready${root ? ' (before)' : ''}  ${Math.round(svc.readyMs)} ms`);
  }
}
const ready = stats(readyMs);
const readyBefore = readyBeforeMs.length ? stats(readyBeforeMs) : undefined;

const TARGETS: Record<string, Target> = {
  '--help': { text: '≤ 0.5 s', bound: 0.5, better: 'lower' },
  'sql "SELECT 1"': { text: '≤ 1.5 s', bound: 1.5, better: 'lower' },
};
writeReport(out, {
  name: 'startup',
  size,
  rows: [
    ...commands.flatMap(({ name }) =>
      runtimes.map((rt) => {
        const median = (results[name][rt]?.medianMs ?? Number.NaN) / 1000;
        const what = `vaultstream ${name}, ${rt === 'compiled' ? 'compiled' : rt === 'tsx' ? 'through tsx' : '--before checkout'}`;
        // The targets are for the compiled CLI that users run; the other runtimes are for comparison.
        return row(`${what} (median of ${RUNS})`, median, 's', rt === 'compiled' ? TARGETS[name] : undefined);
      }),
    ),
    row(
      `npm start on a fresh clone (default config, devnet${tiny ? ' with 1 day' : ', 45 days'}): spawn to /readyz 200 (median of ${readyMs.length})`,
      round(ready.medianMs / 1000),
      's',
      { text: '≤ 30 s', bound: 30, better: 'lower' },
      !tiny,
    ),
    ...(readyBefore
      ? [
          row(
            `npm start on a fresh clone, --before checkout: spawn to /readyz 200 (median of ${readyBeforeMs.length})`,
            round(readyBefore.medianMs / 1000),
            's',
          ),
        ]
      : []),
  ],
  ready,
  readyBefore,
  node: process.version,
  cpus: cpus().length,
  loadavg1m: { before: Number(loadBefore[0].toFixed(2)), after: Number(loadavg()[0].toFixed(2)) },
  runs: RUNS,
  before: BEFORE
    ? execFileSync('git', ['-C', BEFORE, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' })
        .trim()
        .slice(0, 120)
    : undefined,
  note: `wall time of a fresh process per run (bin/vaultstream.mjs, VAULTSTREAM_RUNTIME=compiled|tsx; before: the other checkout as it is)${tiny ? ', no warm-up' : ', after one warm-up each; tsx with its compile cache warm'}`,
  results,
});
