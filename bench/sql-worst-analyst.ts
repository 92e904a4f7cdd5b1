/**
 * The worst analyst: `npx tsx bench/sql-worst-analyst.ts [--size tiny|full] [--out FILE.json]
 * [--seconds 30] [--backfill-days 7] [--connections 10] [--loops all|name,...]` (tiny: 1 day of
 * history, 3 s loads; `--loops` runs only the analyst's loops named, to see which costs what).
 *
 * `vaultstream start` on the default devnet (live: the simulator keeps landing data), then the
 * API's read mix (bench/live-uncached.ts MIX) at `connections` for `seconds`, twice: quiet, and
 * while an analyst loops every request of the second SQL probe's findings against the SQL
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
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startVaultstream, stopProcess } from './live-bare.ts';
import { MIX } from './live-uncached.ts';
import { loadMix } from './load.ts';
import { benchArgs, round, row, writeReport } from './report.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SELF = fileURLToPath(import.meta.url);

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

/** The analyst: each finding's request in a loop of its own until `stop()`; counts what it sent. */
function worstAnalyst(sqlUrl: string, only: string[]) {
  let running = true;
  const sent: Record<string, number> = {};
  const count = (k: string) => {
    sent[k] = (sent[k] ?? 0) + 1;
  };
  // The answer's bytes are read and dropped as they come, never decoded: the analyst's client costs
  // this machine (which the service shares with it) as little as a client can, and the server as
  // much as it can.
  const get = (what: string, query: string, extra = '', headers: Record<string, string> = {}) =>
    new Promise<void>((done) => {
      count(what);
      const req = request(`${sqlUrl}/?query=${encodeURIComponent(query)}${extra}`, { headers }, (res) => {
        res.resume();
        res.on('end', () => done());
        res.on('error', () => done());
        res.on('close', () => done());
      });
      req.on('error', () => done());
      req.end();
    });
  const big = 'SELECT randomPrintableASCII(100) FROM numbers(300000) FORMAT TSV';
  const loops: Record<string, () => Promise<void>> = {
    'compressed br': () =>
      get('compressed br', big, '&enable_http_compression=1', { 'Accept-Encoding': 'br' }),
    'compressed gzip': () =>
      get('compressed gzip', big, '&enable_http_compression=1', { 'Accept-Encoding': 'gzip' }),
    'compress=1': () => get('compress=1', big, '&compress=1'),
    'forbidden reads': async () => {
      for (const q of [
        "DESCRIBE (SELECT 1 LIMIT (SELECT toString(groupArray((name, value))) FROM system.server_settings WHERE value LIKE '%/%'))",
        'DESCRIBE (SELECT * FROM generateRandom((SELECT any(path) FROM system.disks)))',
        "SELECT 'x' IN system.disks",
        'DESCRIBE (SELECT 1 LIMIT (SELECT toString(groupArray(last_error_message)) FROM system.errors))',
      ])
        await get('forbidden reads', q);
    },
    'heavy, 1e-300': () =>
      get(
        'heavy, 1e-300',
        'SELECT sum(cityHash64(number)) FROM numbers(100000000000)',
        '&max_execution_time=1e-300',
      ),
    heavy: () => get('heavy', 'SELECT sum(cityHash64(number)) FROM numbers(100000000000)'),
    'long parse': async () => {
      count('long parse');
      const where = Array.from({ length: 30_000 }, (_, i) => `${i} = ${i}`).join(' AND ');
      await new Promise<void>((done) => {
        const req = request(`${sqlUrl}/`, { method: 'POST' }, (res) => {
          res.resume();
          res.on('close', () => done());
        });
        req.on('error', () => done());
        req.end(`SELECT 1 WHERE ${where}`);
      });
    },
    'slow body': () =>
      new Promise<void>((done) => {
        count('slow body');
        const req = request(
          `${sqlUrl}/`,
          { method: 'POST', headers: { 'Content-Length': '100000' } },
          (res) => {
            res.resume();
            res.on('end', () => done());
          },
        );
        req.on('error', () => done());
        req.write('S');
        const drip = setInterval(() => req.write(' '), 1000);
        req.on('close', () => {
          clearInterval(drip);
          done();
        });
      }),
    'slow reader': () =>
      new Promise<void>((done) => {
        count('slow reader');
        const req = request(
          `${sqlUrl}/?query=${encodeURIComponent("SELECT number, repeat('x', 100) FROM numbers(1000000)")}`,
          (res) => {
            res.pause();
            res.socket.once('close', () => done());
            // The server cuts a client that takes nothing for sql.http.clientTimeoutMs; a paused
            // socket may not see it, so the loop goes on after a bound either way.
            setTimeout(() => {
              req.destroy();
              done();
            }, 15_000);
          },
        );
        req.on('error', () => done());
        req.end();
      }),
  };
  const picked = Object.entries(loops).filter(([name]) => only.length === 0 || only.includes(name));
  const workers = picked.map(async ([, fn]) => {
    while (running) await fn();
  });
  return {
    sent,
    stop: async () => {
      running = false;
      await Promise.all(workers);
    },
  };
}

/**
 * The analyst in a process of its own (this file, `analyst <sql url>`): its loops, their reading
 * and decompressing of answers, must not share the load generator's event loop, whose latency
 * the rows report. It stops when its stdin closes and prints what it sent.
 */
function startAnalyst(sqlUrl: string, only: string) {
  const proc = spawn(process.execPath, ['--import', 'tsx', SELF, 'analyst', sqlUrl, only], {
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
    stop: async (): Promise<Record<string, number>> => {
      // 'close', not 'exit': its last line may come after it exited.
      const exited = new Promise<void>((r) => proc.once('close', () => r()));
      proc.stdin?.end();
      await exited;
      const line = /SENT (.*)/.exec(out)?.[1];
      if (!line) throw new Error(`the analyst printed no SENT line: ${out.slice(-300)}`);
      return JSON.parse(line) as Record<string, number>;
    },
  };
}

async function analystMain(sqlUrl: string, only: string): Promise<void> {
  const analyst = worstAnalyst(sqlUrl, only ? only.split(',') : []);
  process.stdout.write('LOOPING\n');
  process.stdin.resume();
  await new Promise<void>((r) => process.stdin.once('end', () => r()));
  // The loops in flight end within their bounds (a slow body at its deadline, a reader at 15 s).
  await analyst.stop();
  process.stdout.write(`SENT ${JSON.stringify(analyst.sent)}\n`, () => process.exit(0));
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
    { seconds: undefined, 'backfill-days': undefined, connections: '10', loops: 'all' },
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
  const { proc, url } = await startVaultstream('start', data, {
    VAULTSTREAM__devnet__backfillDays: values['backfill-days'],
    // The load is the benchmark's clients, all from loopback.
    VAULTSTREAM__api__rateLimit__enabled: 'false',
  });
  try {
    const pid = proc.pid as number;
    const sqlUrl = (JSON.parse(readFileSync(join(data, 'sql-http.json'), 'utf8')) as { url: string }).url;
    const first = (await (await fetch(`${url}/v1/vaults`)).json()) as { data: { slug: string }[] };
    const slug = first.data[0]?.slug ?? 'ndev0';
    const paths = MIX.map(([, p]) => p.replace('{slug}', slug));
    for (const p of paths) await (await fetch(`${url}${p}`)).arrayBuffer();

    const quietReady = watchReady(url);
    const rss0 = rssMb(pid);
    const quiet = await loadMix(url, paths, seconds, connections);
    const quietReadiness = await quietReady.stop();

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
    const busy = await loadMix(url, paths, seconds, connections);
    const busyReadiness = await busyReady.stop();
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
      analystSent: sent,
      serviceRssMb: { before: round(rss0), peak: round(rssPeak), after: round(rss1) },
      analystsProcessPeakRssMb: round(analystsPeak),
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
        row(
          'analyst requests sent',
          Object.values(sent).reduce((a, b) => a + b, 0),
          'requests',
          undefined,
          true,
          {
            byKind: sent,
          },
        ),
      ],
    });
  } finally {
    await stopProcess(proc);
    rmSync(dir, { recursive: true, force: true });
  }
}

(process.argv[2] === 'analyst' ? analystMain(process.argv[3], process.argv[4] ?? '') : main()).catch(
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
