/**
 * The devnet's anvil nodes' resident memory over live ticks: the default
 * devnet (3 chains, 3 vaults, 45 days of history) with its live ticks run back to back instead
 * of every 3 s, each node's RSS sampled every `--sample` ticks. After `historyStatesTicks` (600)
 * ticks the nodes restart keeping `liveStates` (64) block states (devnet/state-trim.ts); the rows
 * are the RSS at ready, just before and after that restart and at the end (the largest node),
 * the restart's outage, and the growth after it per 1,000 ticks and per day at a tick every
 * 3 s (28,800 ticks: a least-squares slope over the samples from `--settle` ticks after the
 * restart). The devnet runs as `vaultstream start` embeds it: after the restart each node keeps
 * the transactions of the last `devnet.liveTransactionBlocks` blocks (2,000 there;
 * `--transaction-blocks N` sets it, 0 keeps all as `vaultstream devnet` does). `--live-states 0`
 * runs the same without the restart.
 *
 *   npx tsx bench/diagnostics/anvil-memory.ts [--size tiny|full] [--out FILE.json] [--ticks 8000] [--sample 200] [--settle 2200] [--history-ticks 600] [--live-states 64] [--transaction-blocks N] [--restart-ticks N]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { liveTransactionBlocks, startDevnet } from '../../devnet/run.ts';
import { benchArgs, round, row, writeReport } from '../report.ts';

const { values, size, out } = benchArgs(
  'anvil-memory',
  {
    ticks: undefined,
    sample: undefined,
    settle: undefined,
    'history-ticks': undefined,
    'live-states': '64',
    'transaction-blocks': undefined,
    'restart-ticks': undefined,
  },
  {
    tiny: { ticks: '12', sample: '2', settle: '0', 'history-ticks': '6', 'restart-ticks': '3' },
    // The nodes drop a block's transactions once 2,000 newer blocks follow (a block a tick): the
    // growth is measured from 2,200 ticks after the restart, when they do.
    // Three restarts (ticks 600, 5,400 and 10,200 at devnet.restartTicks 4,800).
    full: { ticks: '10400', sample: '200', settle: '2200', 'history-ticks': '600' },
  },
);
const ticks = Number(values.ticks);
const every = Number(values.sample);
const historyTicks = Number(values['history-ticks']);
const TICKS_A_DAY = 86_400 / 3;
const MB = 1024 * 1024;

/** Resident memory (bytes) of the anvil process whose HOME is `home` (the node's own). */
function rssOf(home: string): number {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0].endsWith('/anvil')) continue;
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`HOME=${home}`)) continue;
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return 0;
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

const dir = mkdtempSync(join(tmpdir(), 'vs-bench-anvil-memory-'));
const settings = parseConfig({
  devnet: {
    enabled: true,
    liveIntervalMs: 0,
    historyStatesTicks: historyTicks,
    liveStates: Number(values['live-states']),
    ...(values['transaction-blocks'] === undefined
      ? {}
      : { liveTransactionBlocks: Number(values['transaction-blocks']) }),
    ...(values['restart-ticks'] === undefined ? {} : { restartTicks: Number(values['restart-ticks']) }),
    ...(size === 'tiny' ? { chainIds: [98866], vaults: 2, backfillDays: 2 } : {}),
  },
}).devnet;
const log = createLogger('warn');
const devnet = await startDevnet({ settings, dataDir: dir, log, embedded: true });
const samples: { tick: number; rssMb: number[] }[] = [];
const sample = (tick: number) =>
  samples.push({ tick, rssMb: devnet.anvilHomes.map((h) => round(rssOf(h) / MB, 1)) });
// The restarts' ticks (devnet/state-trim.ts): the first after the history's, then every restartTicks.
const restartsAt: number[] = [];
for (let t = historyTicks; settings.liveStates > 0 && t <= ticks; t += settings.restartTicks || ticks + 1)
  restartsAt.push(t);
const restarts: { tick: number; ms: number; before: number; after: number }[] = [];
sample(0);
try {
  for (let t = 1; t <= ticks; t++) {
    const restart = restartsAt.includes(t);
    if (restart) sample(t - 1);
    const homes = devnet.anvilHomes.join();
    const started = performance.now();
    await devnet.simulator.tick();
    if (restart && devnet.anvilHomes.join() !== homes) {
      // The tick's time: its transactions, the replay since the checkpoint and the restart.
      const ms = Math.round(performance.now() - started);
      sample(t);
      restarts.push({ tick: t, ms, before: largest(samples.at(-2)), after: largest(samples.at(-1)) });
    }
    if (t % every === 0) sample(t);
  }
} finally {
  await devnet.stop();
  rmSync(dir, { recursive: true, force: true });
}

function largest(s: { rssMb: number[] } | undefined): number {
  return Math.max(...(s?.rssMb ?? [0]));
}
// The growth between the first two restarts, once the nodes drop old transactions (`--settle`).
const from = (restarts[0]?.tick ?? 0) + Number(values.settle);
const until = restarts[1]?.tick ?? ticks + 1;
const tail = samples.filter((s) => s.tick >= from && s.tick < until);
const perTick = Math.max(
  ...devnet.anvilHomes.map((_, i) => slope(tail.map((s) => [s.tick, s.rssMb[i]] as [number, number]))),
);
// With restarts every restartTicks: the rise of the RSS just after one restart to just after the next.
const cycle =
  restarts.length >= 3 ? (restarts[2].after - restarts[1].after) / settings.restartTicks : undefined;
const rows = [
  row('anvil RSS at ready (largest node)', largest(samples[0]), 'MB'),
  ...restarts.flatMap((r, k) => [
    row(`restart ${k + 1}: anvil RSS at tick ${r.tick - 1}, before`, r.before, 'MB'),
    row(`restart ${k + 1}: anvil RSS at tick ${r.tick}, after`, r.after, 'MB'),
    row(`restart ${k + 1}: its tick (transactions, replay, restart)`, r.ms, 'ms'),
  ]),
  row(`anvil RSS at tick ${ticks}`, largest(samples.at(-1)), 'MB'),
  row(
    `growth per 1,000 ticks from tick ${from} to ${Math.min(until - 1, ticks)}`,
    round(perTick * 1000, 1),
    'MB',
  ),
  row('that growth a day at a tick every 3 s', round(perTick * TICKS_A_DAY, 0), 'MB'),
  ...(cycle === undefined
    ? []
    : [
        row(
          'growth per 1,000 ticks from just after restart 2 to just after restart 3',
          round(cycle * 1000, 1),
          'MB',
        ),
        row('that growth a day at a tick every 3 s', round(cycle * TICKS_A_DAY, 0), 'MB'),
      ]),
];
for (const r of rows) console.log(`${r.workload}: ${r.value} ${r.unit}`);
writeReport(out, {
  name: 'anvil-memory',
  size,
  rows,
  liveStates: settings.liveStates,
  liveTransactionBlocks: liveTransactionBlocks(settings, true),
  restartTicks: settings.restartTicks,
  historyStatesTicks: historyTicks,
  loadavg: loadavg().map((x) => round(x, 1)),
  samples,
});
