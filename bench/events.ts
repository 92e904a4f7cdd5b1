/**
 * The event stream benchmark: `npx tsx bench/events.ts [--size tiny|full] [--out FILE.json]
 * [--seconds 30] [--idle 1000] [--silent 10] [--backfill-days 2]` (tiny: 5 s, 50 idle clients).
 *
 * `vaultstream start` with the default devnet; once `/readyz` answers 200:
 * 1. The 10-connection mix of bench/live.ts' endpoints (its bodies also served by the bare
 *    server, the live benchmark's yardstick) for `seconds`, with no event stream open, then as
 *    long again idle (the control of the memory row).
 * 2. `idle` clients open GET /v1/events and read what comes, `silent` clients send the request
 *    and never read, and one measuring client records when each activity event arrives. The
 *    same mix runs again for `seconds`, then the clients stay `seconds` more.
 *
 * Rows: the time from an activity row stored (its `ingested_at`, stamped by the consumer's
 * insert, read back by SQL) to its event at the measuring client, median and p99 (target: at
 * most the API's staleness bound `api.cache.maxStaleMs` + 100 ms); the mix's p99 with the
 * streams open (target: the live benchmark's, at most 2x the bare server's) and without; the
 * process tree's RSS growth while the streams are open less its growth over the same time with
 * none open before (target: at most 100 MB); and how many silent clients were dropped (no
 * target: see the row). The mix rows carry the 1-minute load average as each mix began: their
 * p99 moves with the machine's other work more than with the streams.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureMix, startBare, startVaultstream, stopProcess } from './live-bare.ts';
import { mixPaths } from './live-uncached.ts';
import { loadMix } from './load.ts';
import { sum, tree } from './proc-tree.ts';
import { type BenchRow, benchArgs, round, row, writeReport } from './report.ts';

const STALENESS_MS = 2000; // api.cache.maxStaleMs's default, which the service runs with here

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One SSE client: calls `onEvent` with each event's name and data as it is complete (a blank line). */
function openStream(url: string, onEvent?: (event: string, data: string) => void): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (!onEvent) return;
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const field = (name: string) =>
            block
              .split('\n')
              .filter((l) => l.startsWith(`${name}: `))
              .map((l) => l.slice(name.length + 2))
              .join('\n');
          if (field('data')) onEvent(field('event'), field('data'));
          end = buffer.indexOf('\n\n');
        }
      });
      res.on('error', () => {});
      resolve(() => req.destroy());
    });
    req.on('error', reject);
    req.end();
  });
}

/** A client that sends the request and never reads a byte of the answer. */
function openSilent(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write('GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n');
      resolve(s);
    });
    s.pause();
    s.once('error', reject);
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

async function main(): Promise<void> {
  const { values, size, out } = benchArgs(
    'events',
    { seconds: '30', idle: '1000', silent: '10', 'backfill-days': '2' },
    { tiny: { seconds: '5', idle: '50', 'backfill-days': '1' }, full: {} },
  );
  const seconds = Number(values.seconds);
  const idle = Number(values.idle);
  const silentN = Number(values.silent);
  const dir = mkdtempSync(join(tmpdir(), 'vs-bench-events-'));
  const dataDir = join(dir, 'data');
  const loadStart = loadavg();
  const svc = await startVaultstream('start', dataDir, {
    VAULTSTREAM__devnet__enabled: 'true',
    VAULTSTREAM__devnet__backfillDays: values['backfill-days'],
    VAULTSTREAM__api__events__maxClients: String(idle + silentN + 10),
  });
  const closers: (() => void)[] = [];
  const silent: Socket[] = [];
  try {
    const { paths } = await mixPaths(svc.url);
    const bodies = await captureMix(
      svc.url,
      paths.map(([, p]) => p),
    );
    const bare = await startBare(bodies, dir);
    let bareP99: number;
    try {
      bareP99 = (await loadMix(bare.url, bodies.paths, seconds, 10)).p99Ms;
    } finally {
      await stopProcess(bare.proc);
    }
    const rss = () => sum(tree(svc.proc.pid as number), (s) => s.rssMb);
    // The control: the process tree's growth over the same time (the mix, then as long again) with
    // no stream open, as the data keeps landing.
    const rssStart = rss();
    const loadWithout = round(loadavg()[0]);
    const without = await loadMix(svc.url, bodies.paths, seconds, 10);
    await sleep(seconds * 1000);
    const rssBefore = rss();
    const droppedBefore = await metric(svc.url, 'vaultstream_events_dropped_total');

    // The measuring client: each activity event's arrival (wall clock, as ingested_at is).
    const arrived = new Map<string, number>();
    closers.push(
      await openStream(`${svc.url}/v1/events?types=activity`, (event, data) => {
        if (event !== 'activity') return;
        const t = JSON.parse(data) as { chainId: number; transactionHash: string; logIndex: number };
        arrived.set(`${t.chainId}:${t.transactionHash}:${t.logIndex}`, Date.now());
      }),
    );
    for (let i = 0; i < idle; i++) closers.push(await openStream(`${svc.url}/v1/events`, () => {}));
    const port = Number(new URL(svc.url).port);
    for (let i = 0; i < silentN; i++) silent.push(await openSilent(port));
    const clients = await metric(svc.url, 'vaultstream_events_clients');
    const loadWith = round(loadavg()[0]);
    const withStreams = await loadMix(svc.url, bodies.paths, seconds, 10);
    await sleep(seconds * 1000);
    const rssAfter = rss();
    const dropped = (await metric(svc.url, 'vaultstream_events_dropped_total')) - droppedBefore;

    // When each row that came as an event was stored, by the SQL interface.
    const sqlUrl = (JSON.parse(readFileSync(join(dataDir, 'sql-http.json'), 'utf8')) as { url: string }).url;
    const q = `SELECT chain_id, tx_hash, log_index, toUnixTimestamp64Milli(min(ingested_at)) AS t
      FROM vaultstream.activity_raw WHERE removed = 0 GROUP BY chain_id, tx_hash, log_index FORMAT JSONEachRow`;
    const text = await (await fetch(`${sqlUrl}/?query=${encodeURIComponent(q)}`)).text();
    const latencies: number[] = [];
    for (const line of text.split('\n').filter(Boolean)) {
      const r = JSON.parse(line) as { chain_id: number; tx_hash: string; log_index: number; t: string };
      const at = arrived.get(`${r.chain_id}:${r.tx_hash}:${r.log_index}`);
      if (at !== undefined) latencies.push(at - Number(r.t));
    }
    if (!latencies.length) throw new Error(`no activity event matched a stored row (${arrived.size} events)`);

    const latencyTarget = {
      text: `<= ${STALENESS_MS + 100} ms`,
      bound: STALENESS_MS + 100,
      better: 'lower' as const,
    };
    const extra = {
      clients,
      events: latencies.length,
      loadavg1mStart: round(loadStart[0]),
      loadavg1mEnd: round(loadavg()[0]),
    };
    const rows: BenchRow[] = [
      row(
        'row stored to SSE event at the client, median',
        quantile(latencies, 0.5),
        'ms',
        latencyTarget,
        true,
        extra,
      ),
      row(
        'row stored to SSE event at the client, p99',
        quantile(latencies, 0.99),
        'ms',
        latencyTarget,
        true,
        extra,
      ),
      row(
        `API mix p99, 10 connections, ${idle} idle + ${silentN} silent streams open`,
        withStreams.p99Ms,
        'ms',
        { text: `<= 2x bare (${bareP99} ms)`, bound: 2 * bareP99, better: 'lower' },
        size === 'full',
        { errors: withStreams.errors, p50Ms: withStreams.p50Ms, bareP99Ms: bareP99, loadavg1m: loadWith },
      ),
      row('API mix p99, 10 connections, no stream open', without.p99Ms, 'ms', undefined, true, {
        errors: without.errors,
        bareP99Ms: bareP99,
        loadavg1m: loadWithout,
      }),
      row(
        `service RSS growth with ${idle + silentN + 1} streams open, less the control's`,
        round(rssAfter - rssBefore - (rssBefore - rssStart), 1),
        'MB',
        { text: '<= 100 MB', bound: 100, better: 'lower' },
        true,
        {
          growthMb: round(rssAfter - rssBefore, 1),
          controlGrowthMb: round(rssBefore - rssStart, 1),
          rssBeforeMb: round(rssBefore, 1),
          rssAfterMb: round(rssAfter, 1),
        },
      ),
      // No target: at the devnet's rate a silent client's events fit in its socket's kernel buffers
      // for longer than this runs, and those cost no one else anything; the drop past
      // api.events.clientBufferBytes is what test/api/events.test.ts checks.
      row('silent clients dropped', dropped, 'clients', undefined, true, { silent: silentN }),
    ];
    writeReport(out, { name: 'events', size, rows });
  } finally {
    for (const c of closers) c();
    for (const s of silent) s.destroy();
    await stopProcess(svc.proc);
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
