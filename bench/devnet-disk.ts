/**
 * Disk a day of `npm start` takes (issue 24 item 2): `vaultstream start` as a fresh clone runs
 * it (bench/start-ready.ts: the default config, the devnet with its 45 days and a live tick
 * every 3 s), measured at `/readyz` 200 and then every `--sample-s` seconds for `--minutes` of
 * live running: the data directory (bus log, chDB, checkpoints, ground truth) and the anvil
 * nodes' HOMEs. A day is extrapolated from the growth while live, measured from `--settle-min`
 * on (the store keeps merged-away parts for 8 minutes, ClickHouse's old_parts_lifetime, so the
 * first minutes grow faster than any later ones) as the growth of the size's floor (it swings
 * by tens of MB as parts merge), added to the highest size seen; target ≤ 1 GB. Also the anvil nodes'
 * resident memory at the end, which their state bound keeps flat (devnet/run.ts `keptStates`).
 *
 *   npx tsx bench/devnet-disk.ts [--size tiny|full] [--out FILE.json] [--minutes 16] [--settle-min 8] [--sample-s 30]
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
    full: { minutes: '16', 'sample-s': '30', 'settle-min': '8' },
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
const samples: { s: number; dataDir: number; anvilHomes: number }[] = [];
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
const total = (s: Sample) => s.dataDir + s.anvilHomes;
const first = samples[0];
const last = samples[samples.length - 1];
// The store's size swings by tens of MB as parts are merged and the merged-away ones expire;
// what stays is its floor. Growth: the floor (smallest sample) of the second half of the
// settled samples over the first half's, per the time between the halves.
const settled = samples.filter((s) => s.s >= Number(values['settle-min']) * 60);
const half = Math.floor(settled.length / 2);
const [early, late] = [settled.slice(0, half), settled.slice(half)];
const floor = (xs: Sample[]) => Math.min(...xs.map(total));
const halfSeconds = late.length && early.length ? late[0].s - early[0].s : 0;
const perSecond = halfSeconds > 0 ? Math.max(0, (floor(late) - floor(early)) / halfSeconds) : 0;
// A day: the highest sample while live, plus the floor's growth over the rest of the day.
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
    row(
      `npm start: disk floor growth while live (${minutes} min from minute ${values['settle-min']})`,
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
    anvilHomesMB: round(s.anvilHomes / MB, 2),
  })),
  node: process.version,
  cpus: cpus().length,
  loadavg1m: { before: round(loadBefore[0]), after: round(loadavg()[0]) },
  note: 'default config (devnet: 3 chains, 3 vaults, 45 days, a tick every 3 s); tiny: 1 day, 15 s',
});
