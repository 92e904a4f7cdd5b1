/**
 * Disk a day of `npm start` takes (issue 24 item 2): `vaultstream start` as a fresh clone runs
 * it (bench/start-ready.ts: the default config, the devnet with its 45 days and a live tick
 * every 3 s), measured at `/readyz` 200 and then every `--sample-s` seconds for `--minutes` of
 * live running: the data directory (bus log, chDB, checkpoints, ground truth) and the anvil
 * nodes' HOMEs. A day is extrapolated from the growth while live, from `--settle-min` on: the
 * bus log's (it only grows: the slope of its size) plus the rest's floor (the store swings by
 * tens of MB as parts merge and the merged-away ones expire, a saw tooth of a few minutes: the
 * smallest sample of the second half over the first half's), added to the highest size seen;
 * target ≤ 1 GB. Also the anvil nodes' resident memory at the end, which their state bound
 * keeps flat (devnet/run.ts `keptStates`).
 *
 *   npx tsx bench/devnet-disk.ts [--size tiny|full] [--out FILE.json] [--minutes 16] [--settle-min 4] [--sample-s 30]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { benchArgs, round, row, writeReport } from './report.ts';
import { startUntilReady } from './start-ready.ts';

const { values, size, out } = benchArgs(
  'devnet-disk',
  { minutes: undefined, 'sample-s': undefined, 'settle-min': undefined },
  {
    tiny: { minutes: '0.25', 'sample-s': '5', 'settle-min': '0' },
    full: { minutes: '16', 'sample-s': '30', 'settle-min': '4' },
  },
);
const tiny = size === 'tiny';
const MB = 1024 * 1024;

/** Resident memory (bytes) of the anvil processes whose HOME is under `tmp`. */
function anvilRss(tmp: string): number {
  let bytes = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0].endsWith('/anvil')) continue;
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`HOME=${tmp}/vs-anvil-`)) continue;
      bytes += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return bytes;
}

const loadBefore = loadavg();
const svc = await startUntilReady(tiny ? { VAULTSTREAM__devnet__backfillDays: '1' } : {});
const samples: { s: number; dataDir: number; bus: number; anvilHomes: number }[] = [];
const t0 = performance.now();
let rss = 0;
try {
  const end = t0 + Number(values.minutes) * 60_000;
  for (;;) {
    samples.push({ s: (performance.now() - t0) / 1000, ...svc.diskBytes() });
    const last = samples[samples.length - 1];
    console.error(
      `t=${Math.round(last.s)} s data dir ${round(last.dataDir / MB, 1)} MB, anvil homes ${round(last.anvilHomes / MB, 1)} MB`,
    );
    if (performance.now() >= end) break;
    await new Promise((r) =>
      setTimeout(r, Math.min(Number(values['sample-s']) * 1000, end - performance.now())),
    );
  }
  rss = anvilRss(svc.tmp);
} finally {
  await svc.stop();
}

type Sample = (typeof samples)[number];
/** Least-squares slope of `y` over the samples' times, bytes per second. */
function slope(xs: Sample[], y: (s: Sample) => number): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, s) => a + s.s, 0) / n;
  const my = xs.reduce((a, s) => a + y(s), 0) / n;
  const num = xs.reduce((a, s) => a + (s.s - mx) * (y(s) - my), 0);
  const den = xs.reduce((a, s) => a + (s.s - mx) ** 2, 0);
  return den > 0 ? num / den : 0;
}
const total = (s: Sample) => s.dataDir + s.anvilHomes;
const first = samples[0];
const last = samples[samples.length - 1];
// Two parts grow differently. The bus log only grows (appends, no retention): its growth is the
// least-squares slope of its size. The rest (mostly the store) swings by tens of MB as parts
// merge and the merged-away ones expire (a saw tooth of a few minutes): its growth is that of
// its floor, the smallest sample of the second half of the settled samples over the first's.
const settled = samples.filter((s) => s.s >= Number(values['settle-min']) * 60);
const half = Math.floor(settled.length / 2);
const [early, late] = [settled.slice(0, half), settled.slice(half)];
const rest = (s: Sample) => total(s) - s.bus;
const floor = (xs: Sample[]) => Math.min(...xs.map(rest));
const halfSeconds = late.length && early.length ? late[0].s - early[0].s : 0;
const restPerSecond = halfSeconds > 0 ? Math.max(0, (floor(late) - floor(early)) / halfSeconds) : 0;
const busPerSecond = Math.max(
  0,
  slope(settled, (s) => s.bus),
);
const perSecond = busPerSecond + restPerSecond;
// A day: the highest sample while live, plus the growth over the rest of the day.
const peak = Math.max(...settled.map(total), total(last));
const day = peak + perSecond * Math.max(0, 86_400 - last.s);
const minutes = round((last.s - (settled[0]?.s ?? 0)) / 60, 1);

writeReport(out, {
  name: 'devnet-disk',
  size,
  rows: [
    row('npm start: spawn to /readyz 200', round(svc.readyMs / 1000, 1), 's'),
    row('npm start: disk at /readyz 200 (data dir + anvil homes)', round(total(first) / MB, 1), 'MB'),
    row('npm start: anvil homes at /readyz 200', round(first.anvilHomes / MB, 1), 'MB'),
    row(
      `npm start: disk at its highest while live (over ${round(last.s / 60, 1)} min)`,
      round(peak / MB, 1),
      'MB',
    ),
    row(`npm start: bus log growth while live`, round((busPerSecond * 3600) / MB, 1), 'MB/hour'),
    row(
      `npm start: disk growth while live (bus log + the store's floor, ${minutes} min from minute ${values['settle-min']})`,
      round((perSecond * 3600) / MB, 1),
      'MB/hour',
    ),
    row(
      `npm start: disk after a day (extrapolated from ${minutes} min)`,
      round(day / MB, 1),
      'MB',
      { text: '≤ 1 GB', bound: 1024, better: 'lower' },
      !tiny,
    ),
    row('npm start: anvil nodes resident memory at the end', round(rss / MB, 1), 'MB'),
  ],
  samples: samples.map((s) => ({
    s: round(s.s, 1),
    dataDirMB: round(s.dataDir / MB, 2),
    busMB: round(s.bus / MB, 2),
    anvilHomesMB: round(s.anvilHomes / MB, 2),
  })),
  node: process.version,
  cpus: cpus().length,
  loadavg1m: { before: round(loadBefore[0]), after: round(loadavg()[0]) },
  note: 'default config (devnet: 3 chains, 3 vaults, 45 days, a tick every 3 s); tiny: 1 day, 15 s',
});
