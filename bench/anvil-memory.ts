/**
 * The devnet's anvil nodes' resident memory over live ticks (issue 24 item 2): the default
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
 *   npx tsx bench/anvil-memory.ts [--size tiny|full] [--out FILE.json] [--ticks 8000] [--sample 200] [--settle 2200] [--history-ticks 600] [--live-states 64] [--transaction-blocks N]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../core/config.ts';
import { createLogger } from '../core/log.ts';
import { liveTransactionBlocks, startDevnet } from '../devnet/run.ts';
import { benchArgs, round, row, writeReport } from './report.ts';

const { values, size, out } = benchArgs(
  'anvil-memory',
  {
    ticks: undefined,
    sample: undefined,
    settle: undefined,
    'history-ticks': undefined,
    'live-states': '64',
    'transaction-blocks': undefined,
  },
  {
    tiny: { ticks: '12', sample: '2', settle: '0', 'history-ticks': '6' },
    // The nodes drop a block's transactions once 2,000 newer blocks follow (a block a tick): the
    // growth is measured from 2,200 ticks after the restart, when they do.
    full: { ticks: '8000', sample: '200', settle: '2200', 'history-ticks': '600' },
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
    ...(size === 'tiny' ? { chainIds: [98866], vaults: 2, backfillDays: 2 } : {}),
  },
}).devnet;
const log = createLogger('warn');
const devnet = await startDevnet({ settings, dataDir: dir, log, embedded: true });
const samples: { tick: number; rssMb: number[] }[] = [];
const sample = (tick: number) =>
  samples.push({ tick, rssMb: devnet.anvilHomes.map((h) => round(rssOf(h) / MB, 1)) });
let restartTickMs: number | undefined;
const homes = devnet.anvilHomes.join();
sample(0);
try {
  for (let t = 1; t <= ticks; t++) {
    if (t === historyTicks) sample(t - 1);
    const started = performance.now();
    await devnet.simulator.tick();
    if (t === historyTicks && devnet.anvilHomes.join() !== homes) {
      // The tick's time: its transactions, the replay since the checkpoint and the restart.
      restartTickMs = Math.round(performance.now() - started);
      sample(t);
    }
    if (t % every === 0) sample(t);
  }
} finally {
  await devnet.stop();
  rmSync(dir, { recursive: true, force: true });
}

const largest = (s: { rssMb: number[] } | undefined) => Math.max(...(s?.rssMb ?? [0]));
const restarted = restartTickMs !== undefined;
const before = samples.find((s) => s.tick === historyTicks - 1);
const after = restarted ? samples.find((s) => s.tick === historyTicks) : undefined;
const from = (restarted ? historyTicks : 0) + Number(values.settle);
const tail = samples.filter((s) => s.tick >= from);
const perTick = Math.max(
  ...devnet.anvilHomes.map((_, i) => slope(tail.map((s) => [s.tick, s.rssMb[i]] as [number, number]))),
);
const rows = [
  row('anvil RSS at ready (largest node)', largest(samples[0]), 'MB'),
  row(`anvil RSS at tick ${historyTicks - 1}, before the restart`, largest(before), 'MB'),
  ...(after ? [row(`anvil RSS at tick ${historyTicks}, after the restart`, largest(after), 'MB')] : []),
  ...(restartTickMs !== undefined
    ? [row('the restart tick (its transactions, replay, restart)', restartTickMs, 'ms')]
    : []),
  row(`anvil RSS at tick ${ticks}`, largest(samples.at(-1)), 'MB'),
  row(`growth per 1,000 ticks from tick ${from}`, round(perTick * 1000, 1), 'MB'),
  row('growth a day at a tick every 3 s', round(perTick * TICKS_A_DAY, 0), 'MB'),
];
for (const r of rows) console.log(`${r.workload}: ${r.value} ${r.unit}`);
writeReport(out, {
  name: 'anvil-memory',
  size,
  rows,
  liveStates: settings.liveStates,
  liveTransactionBlocks: liveTransactionBlocks(settings, true),
  historyStatesTicks: historyTicks,
  loadavg: loadavg().map((x) => round(x, 1)),
  samples,
});
