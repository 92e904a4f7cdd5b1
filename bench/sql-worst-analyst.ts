/**
 * The worst analyst: `npx tsx bench/sql-worst-analyst.ts [--size tiny|full] [--out FILE.json]
 * [--seconds 30] [--backfill-days 7] [--connections 10] [--loops all|name,...]` (tiny: 1 day of
 * history, 3 s loads; `--loops` runs only the analyst's loops named, to see which costs what).
 *
 * `vaultstream start` on the default devnet (live: the simulator keeps landing data), then the
 * API's read mix (bench/live-uncached.ts MIX) at `connections` for `seconds`, twice: quiet, and
 * while an analyst loops every request of sql-findings.test.ts's findings against the SQL
 * interface at once (each of these a loop of its own):
 *   1. compressed large results: 30 MB of TSV with `Accept-Encoding: br`, gzip, and compress=1;
 *   2. DESCRIBE (subquery) / IN / scalar subqueries over the forbidden system tables;
 *   3. heavy queries, with max_execution_time=1e-300 and without (each to its cap);
 *   4. slow bodies: connections that send a byte a second of a body that never ends;
 *   5. slow readers: answers of 100 MB that are never read;
 *   6. long parses: a query of 30,000 ANDs.
 * Meanwhile `/readyz` is asked every 500 ms and the service's resident memory (its own process,
 * not the analysts') sampled. Rows: the API's p99 with the analyst and without, their ratio
 * (target <= 2), the API's errors (target 0), `/readyz` answers other than 200 (target 0), the
 * service's RSS growth (target <= 200 MB), and what the analyst sent and its process held.
 */

import { spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startVaultstream, stopProcess } from './live-bare.ts';
import { MIX } from './live-uncached.ts';
import { loadMix } from './load.ts';
import { benchArgs, round, row, writeReport } from './report.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLIENT = fileURLToPath(new URL('./sql-worst-analyst-client.ts', import.meta.url));

/** Resident memory of a process (MB), from /proc. */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** The child processes of `pid` (the analysts' process is the service's). */
function children(pid: number): number[] {
  const out: number[] = [];
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.push(
        ...readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number),
      );
    } catch {}
  }
  return out;
}

/** A metric's value in a Prometheus exposition (the first series of that name, any labels). */
function metric(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\}|[^{ ]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/**
 * Bytes the analysts' copy alone holds on disk: its files whose only link is the copy's (parts the
 * store merged away since the copy was made; the others are the store's own files, linked).
 */
function copyOnlyBytes(dir: string): number {
  let bytes = 0;
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(d, name);
      try {
        const st = lstatSync(p);
        if (st.isDirectory()) walk(p);
        else if (st.isFile() && st.nlink === 1) bytes += st.size;
      } catch {}
    }
  };
  walk(dir);
  return bytes;
}

/**
 * The analyst (bench/sql-worst-analyst-client.ts) in a process of its own: its loops must not
 * share the load generator's event loop, whose latency the rows report. It stops when its stdin
 * closes and prints what it sent and what it was answered.
 */
function startAnalyst(sqlUrl: string, only: string) {
  const proc = spawn(process.execPath, ['--import', 'tsx', CLIENT, sqlUrl, only], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const looping = new Promise<void>((resolve) => {
    proc.stdout?.on('data', (d: Buffer) => {
      out += d;
      if (out.includes('LOOPING')) resolve();
    });
  });
  return {
    looping,
    stop: async (): Promise<{ sent: Record<string, number>; answers: Record<string, number> }> => {
      // 'close', not 'exit': its last line may come after it exited.
      const exited = new Promise<void>((r) => proc.once('close', () => r()));
      proc.stdin?.end();
      await exited;
      const line = /SENT (.*)/.exec(out)?.[1];
      if (!line) throw new Error(`the analyst printed no SENT line: ${out.slice(-300)}`);
      return JSON.parse(line) as { sent: Record<string, number>; answers: Record<string, number> };
    },
  };
}

/**
 * The analysts' copy over a window: its refreshes (the service's /metrics,
 * vaultstream_sql_copy_*), its age sampled each second, and the disk only it holds.
 */
function watchCopy(api: string, data: string) {
  const scrape = () =>
    fetch(`${api}/metrics`)
      .then((r) => r.text())
      .catch(() => '');
  const phase = (t: string, part: 'count' | 'sum', p: string) =>
    metric(t, `vaultstream_sql_copy_refresh_seconds_${part}\\{phase="${p}"[^}]*`) ?? 0;
  const counts = (t: string) => ({
    n: phase(t, 'count', 'swap'),
    list: phase(t, 'sum', 'list'),
    swap: phase(t, 'sum', 'swap'),
    tables: metric(t, 'vaultstream_sql_copy_tables_total') ?? 0,
  });
  const first = scrape().then(counts);
  let ageS = 0;
  let onlyBytes = 0;
  const timer = setInterval(() => {
    onlyBytes = Math.max(onlyBytes, copyOnlyBytes(join(data, 'sql-analysts')));
    void scrape().then((t) => {
      ageS = Math.max(ageS, metric(t, 'vaultstream_sql_copy_age_seconds') ?? 0);
    });
  }, 1000);
  return {
    stop: async () => {
      clearInterval(timer);
      const a = await first;
      const b = counts(await scrape());
      const refreshes = b.n - a.n;
      return {
        refreshes,
        meanRefreshMs: refreshes > 0 ? round((1000 * (b.list + b.swap - a.list - a.swap)) / refreshes) : 0,
        meanListMs: refreshes > 0 ? round((1000 * (b.list - a.list)) / refreshes) : 0,
        tablesPerRefresh: refreshes > 0 ? round((b.tables - a.tables) / refreshes, 1) : 0,
        agePeakS: round(ageS, 1),
        copyOnlyPeakMb: round(onlyBytes / 1048576, 1),
      };
    },
  };
}

/** `/readyz` every 500 ms until stopped: how many answers were not 200. */
function watchReady(api: string) {
  let running = true;
  let asked = 0;
  const bad: number[] = [];
  const loop = (async () => {
    while (running) {
      asked++;
      const status = await fetch(`${api}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) bad.push(status);
      await sleep(500);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { asked, notReady: bad.length, statuses: bad.slice(0, 20) };
    },
  };
}

async function main(): Promise<void> {
  const { values, size, out } = benchArgs(
    'sql-worst-analyst',
    // `loops`: the analyst's loops to run, by name (a diagnostic: which one costs the API what); all by default.
    // `refresh-ms`: the service's sql.analysts.refreshIntervalMs (default: the setting's).
    { seconds: undefined, 'backfill-days': undefined, connections: '10', loops: 'all', 'refresh-ms': '' },
    {
      tiny: { seconds: '3', 'backfill-days': '1' },
      full: { seconds: '30', 'backfill-days': '7' },
    },
  );
  const seconds = Number(values.seconds);
  const connections = Number(values.connections);
  const dir = mkdtempSync(join(tmpdir(), 'vs-bench-worst-analyst-'));
  const data = join(dir, 'data');
  const results: Record<string, unknown> = {
    seconds,
    connections,
    cores: cpus().length,
    loadavgBefore: loadavg(),
  };
  const { proc, url, logged } = await startVaultstream('start', data, {
    VAULTSTREAM__devnet__backfillDays: values['backfill-days'],
    // The load is the benchmark's clients, all from loopback.
    VAULTSTREAM__api__rateLimit__enabled: 'false',
    ...(values['refresh-ms'] ? { VAULTSTREAM__sql__analysts__refreshIntervalMs: values['refresh-ms'] } : {}),
  });
  try {
    const pid = proc.pid as number;
    const sqlUrl = (JSON.parse(readFileSync(join(data, 'sql-http.json'), 'utf8')) as { url: string }).url;
    const first = (await (await fetch(`${url}/v1/vaults`)).json()) as { data: { slug: string }[] };
    const slug = first.data[0]?.slug ?? 'ndev0';
    const paths = MIX.map(([, p]) => p.replace('{slug}', slug));
    for (const p of paths) await (await fetch(`${url}${p}`)).arrayBuffer();

    const quietReady = watchReady(url);
    const quietCopy = watchCopy(url, data);
    const rss0 = rssMb(pid);
    const quiet = await loadMix(url, paths, seconds, connections);
    const quietReadiness = await quietReady.stop();
    const copyQuiet = await quietCopy.stop();

    const analyst = startAnalyst(sqlUrl, values.loops === 'all' ? '' : values.loops);
    const busyReady = watchReady(url);
    let rssPeak = rssMb(pid);
    let analystsPeak = 0;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, rssMb(pid));
      for (const c of children(pid)) analystsPeak = Math.max(analystsPeak, rssMb(c));
    }, 250);
    // The analyst's loops get going (the first compressed answers, the slow sockets opened) first.
    await analyst.looping;
    await sleep(2000);
    const busyCopy = watchCopy(url, data);
    const busy = await loadMix(url, paths, seconds, connections);
    const busyReadiness = await busyReady.stop();
    const copyBusy = await busyCopy.stop();
    clearInterval(sampler);
    const sent = await analyst.stop();
    const rss1 = rssMb(pid);
    const growth = Math.max(rssPeak, rss1) - rss0;
    const errors = busy.errors + busy.non2xx;
    const ratio = quiet.p99Ms > 0 ? busy.p99Ms / quiet.p99Ms : 0;
    Object.assign(results, {
      quiet,
      busy,
      quietReadiness,
      busyReadiness,
      analystSent: sent.sent,
      analystAnswers: sent.answers,
      // What the service logged at warn and above, by message (an analysts' process that exited shows here).
      serviceLogged: logged(),
      serviceRssMb: { before: round(rss0), peak: round(rssPeak), after: round(rss1) },
      analystsProcessPeakRssMb: round(analystsPeak),
      copyQuiet,
      copyBusy,
      loadavgAfter: loadavg(),
    });
    const p99 = (n: typeof quiet) => n.fine?.p99Ms ?? n.p99Ms;
    writeReport(out, {
      name: 'sql-worst-analyst',
      size,
      ...results,
      rows: [
        row(`API p99 at ${connections} connections, no analyst`, p99(quiet), 'ms'),
        row(`API p99 at ${connections} connections, the worst analyst looping the findings`, p99(busy), 'ms'),
        row(
          'API p99 with the worst analyst / without',
          round(p99(busy) / p99(quiet), 2),
          'x',
          {
            text: '<= 2x',
            bound: 2,
            better: 'lower',
          },
          size === 'full',
          { autocannonRatio: round(ratio, 2) },
        ),
        row('API errors with the worst analyst (non-2xx and socket errors)', errors, 'requests', {
          text: '0',
          bound: 0,
          better: 'lower',
        }),
        row(
          '/readyz answers other than 200 while the analyst ran',
          busyReadiness.notReady,
          'answers',
          {
            text: '0',
            bound: 0,
            better: 'lower',
          },
          true,
          { asked: busyReadiness.asked },
        ),
        row("the service's RSS growth while the analyst ran (peak over before)", round(growth), 'MB', {
          text: '<= 200 MB',
          bound: 200,
          better: 'lower',
        }),
        row("the analysts' process's peak RSS (its own process; no target)", round(analystsPeak), 'MB'),
        ...(['quiet', 'busy'] as const).flatMap((w) => {
          const c = w === 'quiet' ? copyQuiet : copyBusy;
          const when = w === 'quiet' ? 'no analyst' : 'the worst analyst';
          return [
            row(
              `the analysts' copy, ${when}: mean refresh (the store's parts listed, linked and swapped in)`,
              c.meanRefreshMs,
              'ms',
              undefined,
              true,
              {
                refreshes: c.refreshes,
                tablesPerRefresh: c.tablesPerRefresh,
              },
            ),
            row(
              `the analysts' copy, ${when}: its age at most (staleness, sampled each second)`,
              c.agePeakS,
              's',
            ),
            row(
              `the analysts' copy, ${when}: disk only it holds (parts the store merged away)`,
              c.copyOnlyPeakMb,
              'MB',
            ),
          ];
        }),
        row(
          'analyst requests sent',
          Object.values(sent.sent).reduce((a, b) => a + b, 0),
          'requests',
          undefined,
          true,
          {
            byKind: sent.sent,
          },
        ),
      ],
    });
  } finally {
    await stopProcess(proc);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
