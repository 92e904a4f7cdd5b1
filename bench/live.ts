/**
 * The live benchmark: `npx tsx bench/live.ts [--size tiny|full] [--out FILE.json] [--seconds 15]
 * [--settle-s 20] [--backfill-days 45] [--uncached-requests 20] [--api-thread worker|main]
 * [--pipeline-nice 10]` (tiny: 1 day of devnet history,
 * 1 s per load, 2 uncached requests per endpoint). The API under load while the chain moves, as a
 * new user meets it:
 *
 * 1. `vaultstream start` on a fresh data directory with the default devnet (as `npm start` runs
 *    it: the compiled CLI when it is current, no young-generation flag), API on an ephemeral
 *    port; once `/readyz` answers 200, `settle-s` seconds more (the simulator keeps landing data,
 *    so the data version moves all along).
 * 2. The mix of eight read endpoints (details, details-lite, vault, holders, recent-transactions,
 *    apy-history, performance-history, holders-history): their bodies and headers are taken from
 *    the API, and a bare `node:http` child serves exactly those bytes per path. Then autocannon
 *    cycles every connection through the mix, at 10 and at 100 connections, `seconds` each: the
 *    bare server, then the API (after one request of each path, so its cache holds current
 *    answers as the load starts, as under steady traffic), in the same run. Target per connection
 *    count: the API's p99 at most 2x the bare server's, with 0 errors (non-2xx and socket errors).
 * 2b. The 10-connection mix once more with the pipeline stopped: `vaultstream api` (cache on) on the
 *    same data directory against the bare server again (no target): what the API costs apart from
 *    the pipeline's share of the two cores.
 * 3. The uncached load of each endpoint on its own: the service is stopped and `vaultstream api`
 *    serves the same data directory with the response cache off; each endpoint is requested
 *    `uncached-requests` times in sequence after one warm-up (median and max ms; its target
 *    for the devnet's size: 20 ms).
 *
 * Each load's row also reports the service's event-loop delay and GC pauses over the load window
 * (the difference of two scrapes of its /metrics around the load, bench/live-loop.ts):
 * `serviceEventLoopDelay`, `serviceGc` are the loop the requests waited on, the API's own thread
 * (`api.thread: worker`, the default) or the one main loop (`--api-thread main`);
 * `mainThreadEventLoopDelay`, `mainThreadGc` the main thread's (store, consumers, settle, ingest)
 * when the API has its own.
 *
 * With `--cpu-profile true` the service runs under `node --cpu-prof`, and each load's window of
 * its main thread is summarized (self time by place and by function, bench/live-profile.ts) in
 * the report's `mix[].profile`: what limits the API under load.
 *
 * Results (bench/report.ts rows) go to bench/results/live-latest.json; bench/live-bare.ts is the
 * bare server and the process helpers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureMix, startBare, startVaultstream, stopProcess } from './live-bare.ts';
import { counters, type LoopWindow, loops } from './live-loop.ts';
import { type ProfileSummary, summarizeProfile } from './live-profile.ts';
import { MIX, timedGet, UNCACHED_ENV, type UncachedLoad, uncachedLoads } from './live-uncached.ts';
import { type LoadNumbers, loadMix } from './load.ts';
import { type BenchRow, benchArgs, round, row, writeReport } from './report.ts';

const CONNECTIONS = [10, 100];
const UNCACHED_TARGET_MS = 20;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const { values, size, out } = benchArgs(
    'live',
    {
      seconds: undefined,
      'settle-s': undefined,
      'backfill-days': undefined,
      'uncached-requests': undefined,
      'devnet-chains': undefined,
      'devnet-vaults': undefined,
      'cpu-profile': 'false',
      // The service's api.thread: `worker` (default) or `main` (the API on the main thread's loop).
      'api-thread': 'worker',
      // The service's api.pipelineNice (the rest of the process and the devnet below the API thread); 0: off.
      'pipeline-nice': '10',
      // Extra node flags for the service, after npm start's own (a GC experiment: `--service-node-args=--max-semi-space-size=32`).
      'service-node-args': '',
    },
    {
      // Tiny: the same code paths on one chain and one vault, quickly.
      tiny: {
        seconds: '1',
        'settle-s': '0',
        'backfill-days': '1',
        'uncached-requests': '1',
        'devnet-chains': '[98866]',
        'devnet-vaults': '1',
      },
      // Full: the default devnet (as `npm start` runs it).
      full: { seconds: '15', 'settle-s': '20', 'backfill-days': '45', 'uncached-requests': '20' },
    },
  );
  const seconds = Number(values.seconds);
  const settleMs = Number(values['settle-s']) * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'vs-bench-live-'));
  const dataDir = join(dir, 'data');
  const loadStart = loadavg();
  const devnetEnv: Record<string, string> = {
    VAULTSTREAM__devnet__enabled: 'true',
    VAULTSTREAM__devnet__backfillDays: values['backfill-days'],
  };
  if (values['devnet-chains']) devnetEnv.VAULTSTREAM__devnet__chainIds = values['devnet-chains'];
  if (values['devnet-vaults']) devnetEnv.VAULTSTREAM__devnet__vaults = values['devnet-vaults'];
  const apiThread = values['api-thread'];
  if (apiThread !== 'worker' && apiThread !== 'main') throw new Error('--api-thread: worker or main');
  const pipelineNice = values['pipeline-nice'];
  try {
    // 1. The service with its devnet, data moving.
    const t0 = performance.now();
    const profDir = join(dir, 'cpu-profile');
    const profile = values['cpu-profile'] === 'true';
    const svc = await startVaultstream(
      'start',
      dataDir,
      { ...devnetEnv, VAULTSTREAM__api__thread: apiThread, VAULTSTREAM__api__pipelineNice: pipelineNice },
      [
        ...(profile ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${profDir}`] : []),
        ...values['service-node-args'].split(' ').filter(Boolean),
      ],
    );
    const readySeconds = (performance.now() - t0) / 1000;
    await sleep(settleMs);
    const vaults = (await (await fetch(`${svc.url}/v1/vaults`)).json()) as { data: { slug: string }[] };
    const slug = vaults.data[0]?.slug;
    if (!slug) throw new Error('the devnet API lists no vault');
    const paths = MIX.map(([name, p]) => [name, p.replace('{slug}', slug)] as const);

    // 2. The mix against a bare server with the same bytes, in the same run.
    const mix: {
      connections: number;
      bare: LoadNumbers;
      api: LoadNumbers;
      /** During the API's load: rows landed, answers computed (for waiting requests, in the background), cache lookups by result. */
      during: { rows: number; foreground: number; background: number; lookups: Record<string, number> };
      /** Warnings and errors the service logged during the API's load, by message. */
      loggedDuring: Record<string, number>;
      load1m: number[];
      /** Wall-clock ms of the API's load (to find it in the CPU profile). */
      window: [number, number];
      /** The event-loop delay and GC pauses of the loop serving requests during the API's load (bench/live-loop.ts). */
      loop: LoopWindow;
      /** The main thread's, when the API has its own thread. */
      mainLoop?: LoopWindow;
      /** The service's resident memory (MB) after the API's load. */
      rssMb: number;
      /** The main thread's. */
      profile?: ProfileSummary;
      /** The API's own thread's (`api.thread: worker`). */
      apiThreadProfile?: ProfileSummary;
    }[] = [];
    let bodies: Awaited<ReturnType<typeof captureMix>> | undefined;
    try {
      bodies = await captureMix(
        svc.url,
        paths.map(([, p]) => p),
      );
      const bare = await startBare(bodies, dir);
      try {
        for (const connections of CONNECTIONS) {
          const before = loadavg()[0];
          const bareNumbers = await loadMix(bare.url, bodies.paths, seconds, connections);
          // The cache's answers are current as the load starts, as under steady traffic: an answer
          // is served past its version only within api.cache.maxStaleMs of when the API last saw it.
          if (size === 'full') for (const p of bodies.paths) await timedGet(svc.url, p);
          const c0 = await counters(svc.url);
          const logged0 = svc.logged();
          const w0 = Date.now();
          const apiNumbers = await loadMix(svc.url, bodies.paths, seconds, connections);
          const window: [number, number] = [w0, Date.now()];
          const c1 = await counters(svc.url);
          const logged1 = svc.logged();
          const loggedDuring = Object.fromEntries(
            Object.entries(logged1)
              .map(([k, n]) => [k, n - (logged0[k] ?? 0)] as const)
              .filter(([, n]) => n > 0),
          );
          const during = {
            rows: c1.rows - c0.rows,
            foreground: c1.foreground - c0.foreground,
            background: c1.background - c0.background,
            lookups: Object.fromEntries(
              Object.entries(c1.lookups).map(([k, n]) => [k, n - (c0.lookups[k] ?? 0)]),
            ),
          };
          mix.push({
            connections,
            bare: bareNumbers,
            api: apiNumbers,
            during,
            loggedDuring,
            load1m: [before, loadavg()[0]],
            window,
            ...loops(c0.loop, c1.loop, window[1] - window[0]),
            rssMb: c1.rssMb,
          });
        }
      } finally {
        await stopProcess(bare.proc);
      }
    } finally {
      await stopProcess(svc.proc);
    }
    if (profile) {
      const exited = Date.now();
      for (const m of mix) {
        m.profile = summarizeProfile(profDir, m.window[1] - m.window[0], exited - m.window[1]);
        m.apiThreadProfile = summarizeProfile(
          profDir,
          m.window[1] - m.window[0],
          exited - m.window[1],
          'worker',
        );
      }
    }

    // 2b. The 10-connection mix again with the pipeline stopped: `vaultstream api` (cache on) on the
    // same data, whose main thread serves only the API's reads, against the bare server again. The
    // API's own cost, apart from the pipeline's share of the cores.
    let still: { api: LoadNumbers; bare: LoadNumbers } | undefined;
    if (bodies) {
      const apiOnly = await startVaultstream('api', dataDir, devnetEnv);
      const bare = await startBare(bodies, dir);
      try {
        const bareNumbers = await loadMix(bare.url, bodies.paths, seconds, CONNECTIONS[0]);
        for (const p of bodies.paths) await timedGet(apiOnly.url, p);
        still = { bare: bareNumbers, api: await loadMix(apiOnly.url, bodies.paths, seconds, CONNECTIONS[0]) };
      } finally {
        await stopProcess(bare.proc);
        await stopProcess(apiOnly.proc);
      }
    }

    // 3. Each endpoint on its own, uncached, over the same data (no longer moving).
    const api = await startVaultstream('api', dataDir, { ...devnetEnv, ...UNCACHED_ENV });
    let uncached: UncachedLoad[];
    try {
      const n = Math.max(1, Number(values['uncached-requests']));
      uncached = await uncachedLoads(api.url, paths, n, size === 'full');
    } finally {
      await stopProcess(api.proc);
    }

    const rows: BenchRow[] = [];
    for (const m of mix) {
      const errors = m.api.errors + m.api.non2xx;
      // No answer within the load: every request took longer than it (autocannon's p99 is then 0).
      const apiP99 = m.api.completed === 0 ? seconds * 1000 : m.api.p99Ms;
      // At microsecond resolution when both loads have it: autocannon's whole, truncated ms turn a
      // bare p99 of 1.9 ms into 1 and of 2.1 into 2, which moves the ratio by up to 2x either way.
      const fineRatio =
        m.api.completed > 0 && m.api.fine && m.bare.fine
          ? m.api.fine.p99Ms / Math.max(0.001, m.bare.fine.p99Ms)
          : undefined;
      const p99Ratio = fineRatio ?? apiP99 / Math.max(1, m.bare.p99Ms);
      rows.push(
        row(
          `live mix, ${m.connections} connections: API p99 over the bare server's p99`,
          round(p99Ratio, 2),
          'ratio',
          { text: '≤ 2', bound: 2, better: 'lower' },
          size === 'full',
          {
            apiP50Ms: m.api.p50Ms,
            apiP99Ms: apiP99,
            apiCompleted: m.api.completed,
            bareP99Ms: m.bare.p99Ms,
            // The same percentiles at microsecond resolution (autocannon's are whole ms, truncated).
            fine: {
              apiP50Ms: m.api.fine?.p50Ms ?? null,
              apiP99Ms: m.api.fine?.p99Ms ?? null,
              apiP999Ms: m.api.fine?.p999Ms ?? null,
              bareP50Ms: m.bare.fine?.p50Ms ?? null,
              bareP99Ms: m.bare.fine?.p99Ms ?? null,
              bareP999Ms: m.bare.fine?.p999Ms ?? null,
            },
            apiRequestsPerSecond: Math.round(m.api.requestsPerSecond),
            bareRequestsPerSecond: Math.round(m.bare.requestsPerSecond),
            rowsLandedDuringLoad: m.during.rows,
            answersComputed: { foreground: m.during.foreground, background: m.during.background },
            cacheLookups: m.during.lookups,
            apiThread,
            pipelineNice: Number(pipelineNice),
            serviceEventLoopDelay: m.loop.delay,
            serviceGc: m.loop.gc,
            mainThreadEventLoopDelay: m.mainLoop?.delay,
            mainThreadGc: m.mainLoop?.gc,
            serviceRssMb: m.rssMb,
          },
        ),
        row(
          `live mix, ${m.connections} connections: API errors (non-2xx and socket errors)`,
          errors,
          'requests',
          { text: '= 0', bound: 0, better: 'lower' },
          size === 'full',
          {
            non2xx: m.api.non2xx,
            non2xxByStatus: m.api.non2xxByStatus,
            serviceLogged: m.loggedDuring,
            socketErrors: m.api.errors,
            completed: m.api.completed,
          },
        ),
      );
    }
    if (still?.api.fine && still.bare.fine)
      rows.push(
        row(
          `live mix, ${CONNECTIONS[0]} connections, the pipeline stopped (vaultstream api on the same data): API p99 over the bare server's p99`,
          round(still.api.fine.p99Ms / Math.max(0.001, still.bare.fine.p99Ms), 2),
          'ratio',
          undefined,
          true,
          {
            apiP99Ms: still.api.fine.p99Ms,
            bareP99Ms: still.bare.fine.p99Ms,
            apiRequestsPerSecond: Math.round(still.api.requestsPerSecond),
            bareRequestsPerSecond: Math.round(still.bare.requestsPerSecond),
            errors: still.api.errors + still.api.non2xx,
          },
        ),
      );
    for (const u of uncached)
      rows.push(
        row(
          `uncached ${u.name} (${u.path.replace(slug, '{slug}')}): median of ${values['uncached-requests']}`,
          u.medianMs,
          'ms',
          {
            text: `≤ ${UNCACHED_TARGET_MS} ms (devnet, ${values['backfill-days']} days)`,
            bound: UNCACHED_TARGET_MS,
            better: 'lower',
          },
          size === 'full',
          { maxMs: u.maxMs },
        ),
      );
    writeReport(out, {
      name: 'live',
      size,
      rows,
      node: process.version,
      note: `Shared ${cpus().length}-core machine: the devnet (anvil x3, simulator), the service, the load generator and other work compete for the cores; load1m is the machine's 1-minute load average around each load.`,
      loadAverage: { start: loadStart, end: loadavg() },
      serviceNodeArgs: values['service-node-args'] || undefined,
      apiThread,
      devnet: {
        backfillDays: Number(values['backfill-days']),
        readySeconds: round(readySeconds, 1),
        settleSeconds: settleMs / 1000,
      },
      seconds,
      paths: Object.fromEntries(paths),
      mix,
      uncached,
    });
    console.table(
      mix.map((m) => ({
        connections: m.connections,
        'bare req/s': Math.round(m.bare.requestsPerSecond),
        'api req/s': Math.round(m.api.requestsPerSecond),
        'bare p99 ms': m.bare.p99Ms,
        'api p50 ms': m.api.p50Ms,
        'api p99 ms': m.api.p99Ms,
        'fine p99 api/bare ms': `${m.api.fine?.p99Ms}/${m.bare.fine?.p99Ms}`,
        errors: m.api.errors + m.api.non2xx,
        'rows landed': m.during.rows,
        'computed fg/bg': `${m.during.foreground}/${m.during.background}`,
        'loop delay p99/max ≤ ms': `${m.loop.delay.p99AtMostMs}/${m.loop.delay.maxAtMostMs}`,
        'delays > 5 ms': m.loop.delay.over5ms,
        'gc ms (%)': `${m.loop.gc.totalMs} (${m.loop.gc.percentOfWindow})`,
        'main loop p99/max ≤ ms': m.mainLoop
          ? `${m.mainLoop.delay.p99AtMostMs}/${m.mainLoop.delay.maxAtMostMs}`
          : '-',
      })),
    );
    console.table(uncached);
    for (const m of mix)
      if (m.profile) {
        console.log(`service main thread during the ${m.connections}-connection load (self time %):`);
        console.table(m.profile.byPlace);
        console.table(m.profile.topFunctions);
        console.log(
          `busy stretches of 3 ms or more: ${m.profile.busy.count}, ${m.profile.busy.totalMs} ms; on the stack:`,
        );
        console.table(m.profile.busy.onStack);
        console.log(JSON.stringify(m.profile.busy.longest, null, 1));
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The loops of a load window: the API's own thread's (the one requests wait on) and the main
 * thread's when the API has its own thread, else the one main loop.
 */
await main();
