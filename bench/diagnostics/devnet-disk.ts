/**
 * Disk a day of `npm start` takes: `vaultstream start` as a fresh clone runs
 * it (bench/start-ready.ts: the default config, the devnet with its 45 days and a live tick
 * every 3 s), measured at `/readyz` 200 and then every `--sample-s` seconds for `--minutes` of
 * live running, by component: the bus log, the chDB store, the rest of the data directory
 * (ingest checkpoints, the devnet's ground truth, snapshots) and the anvil nodes' HOMEs.
 *
 * The store is measured twice: on disk (`du`) and its active parts (`system.tables`
 * `total_bytes`, through the SQL interface). The difference is the parts merged away and not yet
 * deleted: it swings by up to hundreds of MB, a saw tooth of about 5 minutes, as small tables are
 * merged whole again at nearly every insert and the merged-away copies wait for the cleanup
 * (chDB's `old_parts_lifetime` is 0; its cleanup delay grows up to `max_cleanup_delay_period`,
 * 300 s). It is treated as a swing, not a trend: its largest value seen is added. What grows is the active data, the bus log (until its retention
 * frees what every group committed) and the rest: each one's trend is its least-squares slope
 * over the samples from `--settle-min` on. A day, steady = each component at ready + its slope x
 * a day; at most = steady + the largest merged-away swing seen + a whole merged-away copy of the
 * day's active store (a merge of big parts keeps them that long); target ≤ 1 GB. Also the
 * anvil nodes' resident memory at the end, which their state bound keeps flat (devnet/run.ts
 * `keptStates`). `--samples FILE.json` estimates a run written before again, starting nothing.
 *
 *   npx tsx bench/diagnostics/devnet-disk.ts [--size tiny|full] [--out FILE.json] [--minutes 50] [--settle-min 4] [--sample-s 10] [--samples FILE.json]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { benchArgs, round, row, writeReport } from '../report.ts';
import { duBytes, startUntilReady } from '../start-ready.ts';

const { values, size, out } = benchArgs(
  'devnet-disk',
  { minutes: undefined, 'sample-s': undefined, 'settle-min': undefined, samples: undefined },
  {
    tiny: { minutes: '0.25', 'sample-s': '5', 'settle-min': '0' },
    full: { minutes: '50', 'sample-s': '10', 'settle-min': '4' },
  },
);
const tiny = size === 'tiny';
const MB = 1024 * 1024;
const DAY_S = 86_400;

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

interface Sample {
  s: number;
  bus: number;
  storeDisk: number;
  storeActive: number;
  other: number;
  anvilHomes: number;
}
interface Run {
  readyMs: number;
  samples: Sample[];
  tablesFirst: Record<string, number>;
  tablesLast: Record<string, number>;
  rss: number;
  loadavg1m: { before: number; after: number };
}

/** Runs `npm start` and samples its disk every `--sample-s` for `--minutes`. */
async function measure(): Promise<Run> {
  const loadBefore = loadavg();
  const svc = await startUntilReady(tiny ? { VAULTSTREAM__devnet__backfillDays: '1' } : {});
  const sqlUrl = (JSON.parse(readFileSync(join(svc.dataDir, 'sql-http.json'), 'utf8')) as { url: string })
    .url;
  /** Bytes of each table's active parts (`system.tables.total_bytes`), through the SQL interface. */
  const activeTables = async (): Promise<Record<string, number>> => {
    const res = await fetch(`${sqlUrl}/?default_format=JSONEachRow`, {
      method: 'POST',
      body: "SELECT name, total_bytes FROM system.tables WHERE database = 'vaultstream' AND total_bytes > 0",
    });
    if (!res.ok) throw new Error(`SQL interface: ${res.status} ${await res.text()}`);
    const out: Record<string, number> = {};
    for (const line of (await res.text()).split('\n').filter(Boolean)) {
      const r = JSON.parse(line) as { name: string; total_bytes: string | number };
      out[r.name] = Number(r.total_bytes);
    }
    return out;
  };
  const run: Run = {
    readyMs: svc.readyMs,
    samples: [],
    tablesFirst: {},
    tablesLast: {},
    rss: 0,
    loadavg1m: { before: round(loadBefore[0]), after: 0 },
  };
  const t0 = performance.now();
  try {
    const end = t0 + Number(values.minutes) * 60_000;
    for (;;) {
      const s = (performance.now() - t0) / 1000;
      const tables = await activeTables();
      const disk = svc.diskBytes();
      const storeDisk = duBytes(join(svc.dataDir, 'chdb'));
      if (run.samples.length === 0) run.tablesFirst = tables;
      run.tablesLast = tables;
      const l: Sample = {
        s,
        bus: disk.bus,
        storeDisk,
        storeActive: Object.values(tables).reduce((a, b) => a + b, 0),
        other: readdirSync(svc.dataDir)
          .filter((n) => n !== 'bus' && n !== 'chdb')
          .reduce((a, n) => a + duBytes(join(svc.dataDir, n)), 0),
        anvilHomes: disk.anvilHomes,
      };
      run.samples.push(l);
      console.error(
        `t=${Math.round(s)} s bus ${round(l.bus / MB, 2)} MB, store ${round(l.storeDisk / MB, 1)} MB on disk (${round(l.storeActive / MB, 2)} MB active), other ${round(l.other / MB, 2)} MB, anvil homes ${round(l.anvilHomes / MB, 2)} MB`,
      );
      if (performance.now() >= end) break;
      await new Promise((r) =>
        setTimeout(r, Math.min(Number(values['sample-s']) * 1000, end - performance.now())),
      );
    }
    run.rss = anvilRss(svc.tmp);
  } finally {
    await svc.stop();
  }
  run.loadavg1m.after = round(loadavg()[0]);
  return run;
}

/** A run written before (`--samples FILE.json`): its samples estimated again, nothing started. */
function reread(file: string): Run {
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const value = (prefix: string) =>
    Number(r.rows.find((x: { workload: string }) => x.workload.startsWith(prefix))?.value ?? 0);
  const tables = (k: 'firstMB' | 'lastMB') =>
    Object.fromEntries((r.tables ?? []).map((t: Record<string, number>) => [t.name, t[k] * MB]));
  return {
    readyMs: value('npm start: spawn to /readyz 200') * 1000,
    samples: r.samples.map((x: Record<string, number>) => ({
      s: x.s,
      bus: x.busMB * MB,
      storeDisk: x.storeDiskMB * MB,
      storeActive: x.storeActiveMB * MB,
      other: x.otherMB * MB,
      anvilHomes: x.anvilHomesMB * MB,
    })),
    tablesFirst: tables('firstMB'),
    tablesLast: tables('lastMB'),
    rss: value('npm start: anvil nodes resident memory') * MB,
    loadavg1m: r.loadavg1m,
  };
}

const { readyMs, samples, tablesFirst, tablesLast, rss, loadavg1m } = values.samples
  ? reread(values.samples)
  : await measure();

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
const first = samples[0];
const last = samples[samples.length - 1];
const settled = samples.filter((s) => s.s >= Number(values['settle-min']) * 60);
const total = (s: Sample) => s.bus + s.storeDisk + s.other + s.anvilHomes;
/** Parts merged away and not yet deleted: a swing (the cleanup's delay), not a trend. */
const overhead = (s: Sample) => Math.max(0, s.storeDisk - s.storeActive);
const growing = {
  'bus log': (s: Sample) => s.bus,
  'store (active parts)': (s: Sample) => s.storeActive,
  'rest of the data dir (checkpoints, ground truth, snapshots)': (s: Sample) => s.other,
  'anvil homes': (s: Sample) => s.anvilHomes,
};
const perDay = Object.fromEntries(
  Object.entries(growing).map(([k, y]) => [k, Math.max(0, slope(settled, y)) * DAY_S]),
) as Record<keyof typeof growing, number>;
const maxOverhead = Math.max(...settled.map(overhead), overhead(last));
const atReady = Object.values(growing).reduce((a, y) => a + y(first), 0);
const steady = atReady + Object.values(perDay).reduce((a, b) => a + b, 0);
// A merge that takes in a table's big parts keeps them, merged away, until the cleanup: at worst
// a whole copy of the active store a day in, beside the small parts' swing seen here.
const storeDay = first.storeActive + perDay['store (active parts)'];
const day = steady + maxOverhead + storeDay;
const minutes = round((last.s - (settled[0]?.s ?? 0)) / 60, 1);
const window = `${minutes} min from minute ${values['settle-min']}`;
const topTables = Object.entries(tablesLast)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 10)
  .map(([name, bytes]) => ({
    name,
    firstMB: round((tablesFirst[name] ?? 0) / MB, 3),
    lastMB: round(bytes / MB, 3),
  }));

writeReport(out, {
  name: 'devnet-disk',
  size,
  rows: [
    row('npm start: spawn to /readyz 200', round(readyMs / 1000, 1), 's'),
    row('npm start: disk at /readyz 200 (data dir + anvil homes)', round(total(first) / MB, 1), 'MB'),
    row('npm start: anvil homes at /readyz 200', round(first.anvilHomes / MB, 1), 'MB'),
    row(
      `npm start: disk at its highest while live (over ${round(last.s / 60, 1)} min)`,
      round(Math.max(...samples.map(total)) / MB, 1),
      'MB',
    ),
    ...Object.entries(perDay).map(([k, v]) =>
      row(`npm start: ${k} growth a day (slope over ${window})`, round(v / MB, 1), 'MB/day'),
    ),
    row(
      'npm start: store parts merged away, not yet deleted (largest seen)',
      round(maxOverhead / MB, 1),
      'MB',
    ),
    row(
      `npm start: disk after a day, steady (at ready + each component's slope x 24 h; ${window})`,
      round(steady / MB, 1),
      'MB',
    ),
    row(
      "npm start: disk after a day, at most (steady + the largest merged-away swing + a merged-away copy of the day's store)",
      round(day / MB, 1),
      'MB',
      { text: '≤ 1 GB', bound: 1024, better: 'lower' },
      !tiny,
    ),
    row('npm start: anvil nodes resident memory at the end', round(rss / MB, 1), 'MB'),
  ],
  samples: samples.map((s) => ({
    s: round(s.s, 1),
    busMB: round(s.bus / MB, 3),
    storeDiskMB: round(s.storeDisk / MB, 2),
    storeActiveMB: round(s.storeActive / MB, 3),
    otherMB: round(s.other / MB, 3),
    anvilHomesMB: round(s.anvilHomes / MB, 2),
  })),
  tables: topTables,
  node: process.version,
  cpus: cpus().length,
  loadavg1m,
  note: 'default config (devnet: 3 chains, 3 vaults, 45 days, a tick every 3 s); tiny: 1 day, 15 s',
});
