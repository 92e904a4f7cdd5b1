/**
 * One run of the backfill bench (bench/backfill.ts): the real CLI, `bin/vaultstream.mjs start`, on
 * a config file in a directory of its own, timed from spawn until every transfer is stored
 * (`transfers` view) and `/v1/vaults/holders`' totalHolders equals the holders the chain leaves.
 * Measured: the seconds, the CPU seconds of the CLI's process tree and by thread, its peak RSS,
 * anvil's CPU while it served, when the chain was first caught up (`/status`), and the JSON-RPC
 * calls the ingester sent. Environment: `BENCH_NODE_ARGS` adds Node flags (e.g. `--trace-gc`);
 * `BENCH_CHILD_OUT=prefix` keeps the CLI's stdout and stderr in `prefix-<name>.{out,err}`;
 * `BENCH_TRACE=1` samples memory and the stored transfers every half second (`memory`: the CLI's
 * anonymous and file-backed RSS, its main thread's V8 heap and ArrayBuffers, from `/metrics`);
 * `BENCH_PERF=prefix` records `perf record -e cpu-clock -g -a` (every process: read the CLI's
 * part with `perf report --pid`) into `prefix-<name>.data` while the CLI runs.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { allPids, procStat, reapOnExit, sum, threadCpu, threadCpuByName, tree } from './proc-tree.ts';
import { round } from './report.ts';

export interface CliRun {
  /** The run's label (`defaults`, `tuned`, `tuned:variant`). */
  name: string;
  /** Where the CLI runs (its working directory) and the config file goes. */
  dir: string;
  config: Record<string, unknown>;
  /** The data directory the config gives (or the default `./data` of `dir`). */
  dataDir: string;
  nodeArgs: string[];
  env: Record<string, string>;
  /** VAULTSTREAM_RUNTIME; `compiled` builds first when a source changed (as `npm start`). */
  runtime: string;
  root: string;
  transfers: number;
  holders: number;
  timeoutSeconds: number;
  /** Where the CLI writes its .cpuprofile files (`--cpu-prof`). */
  cpuProfDir?: string;
  /** anvil's process group (its CPU while it served). */
  anvilPgid: number;
}

export type CliResult = Awaited<ReturnType<typeof runCli>>;

/**
 * CPU seconds of a fixed arithmetic loop (3e8 steps): on the shared machine the same loop's CPU
 * time moves with the other work on the host, so a run's CPU seconds are read beside it.
 */
function machineLoopSeconds(): number {
  const t = process.cpuUsage();
  let s = 0;
  for (let i = 0; i < 3e8; i++) s += i % 7;
  const u = process.cpuUsage(t);
  if (s < 0) throw new Error('unreachable');
  return (u.user + u.system) / 1e6;
}

export async function runCli(run: CliRun) {
  const configFile = join(run.dir, 'config.json');
  writeFileSync(configFile, JSON.stringify(run.config, null, 2));
  if (run.runtime === 'compiled')
    execFileSync(process.execPath, [join(run.root, 'scripts', 'build.mjs'), '--if-stale'], {
      stdio: 'inherit',
    });
  const anvilPids = () => allPids().filter((p) => procStat(p).pgid === run.anvilPgid);
  const anvilCpu0 = sum(anvilPids(), (x) => x.cpu);
  const nodeArgs = [...run.nodeArgs, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  if (run.cpuProfDir) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${run.cpuProfDir}`);
  const load = loadavg()[0];
  const speed = machineLoopSeconds();
  const spawnedAt = Date.now();
  const started = performance.now();
  const proc = spawn(
    process.execPath,
    [...nodeArgs, join(run.root, 'bin', 'vaultstream.mjs'), 'start', '--config', configFile],
    {
      // A data directory left at its default is `./data`, relative to where the CLI runs.
      cwd: run.dir,
      env: {
        ...process.env,
        ...run.env,
        VAULTSTREAM_RUNTIME: run.runtime,
        // Ports of their own: the machine may run other instances.
        VAULTSTREAM__sql__http__port: '0',
        API_PORT: '0',
        LOG_FORMAT: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  reapOnExit(proc);
  let out = '';
  let err = '';
  let errAll = '';
  proc.stdout?.on('data', (d) => (out += d));
  proc.stderr?.on('data', (d) => {
    err = (err + d).slice(-20_000);
    if (process.env.BENCH_CHILD_OUT) errAll += d;
  });
  const pid = proc.pid as number;
  const perf = process.env.BENCH_PERF
    ? spawn(
        'perf',
        [
          'record',
          '-e',
          'cpu-clock',
          '-F',
          '499',
          '-g',
          '-a',
          '-o',
          `${process.env.BENCH_PERF}-${run.name}.data`,
        ],
        { stdio: 'ignore' },
      )
    : undefined;
  if (perf) reapOnExit(perf);
  try {
    let apiUrl = '';
    let sqlUrl = '';
    let stored = 0;
    let apiHolders = -1;
    let peakTreeMb = 0;
    /** Tree RSS (MB) every 100 ms from spawn. */
    const rssTimeline: number[] = [];
    let pids = [pid];
    /**
     * With BENCH_TRACE: every half second, the CLI's resident memory (anonymous and file-backed,
     * /proc), its main thread's V8 heap and external memory (ArrayBuffers) and the transfers stored
     * (rows inserted into transfers_raw), from `/metrics`.
     */
    const memory: {
      at: number;
      anonMb: number;
      fileMb: number;
      heapMb: number;
      externalMb: number;
      transfersStored: number;
    }[] = [];
    const sampler = setInterval(() => {
      pids = tree(pid);
      const rss = sum(pids, (x) => x.rssMb);
      peakTreeMb = Math.max(peakTreeMb, rss);
      rssTimeline.push(Math.round(rss));
      if (process.env.BENCH_TRACE && apiUrl && rssTimeline.length % 5 === 0) {
        const at = round((performance.now() - started) / 1000, 1);
        fetch(`${apiUrl}/metrics`)
          .then((res) => res.text())
          .then(
            (text) => {
              const mb = (metric: string) =>
                Math.round(Number(new RegExp(`^${metric} (\\S+)$`, 'm').exec(text)?.[1]) / 2 ** 20);
              let st = '';
              try {
                st = readFileSync(`/proc/${pid}/status`, 'utf8');
              } catch {
                return;
              }
              const kb = (f: string) => Number(new RegExp(`${f}:\\s+(\\d+) kB`).exec(st)?.[1] ?? 0);
              memory.push({
                at,
                anonMb: Math.round(kb('RssAnon') / 1024),
                fileMb: Math.round(kb('RssFile') / 1024),
                heapMb: mb('nodejs_heap_size_total_bytes'),
                externalMb: mb('nodejs_external_memory_bytes'),
                transfersStored: Number(
                  /^vaultstream_rows_inserted_total\{table="transfers_raw"\} (\S+)$/m.exec(text)?.[1] ?? 0,
                ),
              });
            },
            () => {},
          );
      }
    }, 100);

    const deadline = Date.now() + run.timeoutSeconds * 1000;
    const sql = async (q: string) => {
      const res = await fetch(`${sqlUrl}/?query=${encodeURIComponent(q)}`);
      return (await res.text()).trim();
    };
    for (;;) {
      if (Date.now() > deadline || proc.exitCode !== null)
        throw new Error(
          `${run.name}: not done (stored ${stored}/${run.transfers}, holders ${apiHolders}/${run.holders}); stderr:\n${err.slice(-3000)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
      apiUrl ||= /vaultstream API (http:\/\/[^\s]+)\/v1/.exec(out)?.[1] ?? '';
      try {
        // The running process records its SQL interface's address in the data directory.
        sqlUrl ||= (JSON.parse(readFileSync(join(run.dataDir, 'sql-http.json'), 'utf8')) as { url: string })
          .url;
      } catch {
        // not listening yet
      }
      if (!apiUrl || !sqlUrl) continue;
      try {
        // The API's answer first: served from its cache until the data changes (at most once a
        // second while the consumers store rows), so the poll costs the CLI next to nothing; the
        // stored count, a query of the engine's, once the holders are right.
        const res = await fetch(`${apiUrl}/v1/vaults/holders`);
        const body = (await res.json()) as { data?: { totalHolders: number }[] };
        apiHolders = body.data?.[0]?.totalHolders ?? -1;
        if (apiHolders !== run.holders) continue;
        stored = Number(await sql('SELECT count() FROM vaultstream.transfers'));
        if (stored === run.transfers) break;
      } catch {
        // not serving yet
      }
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    pids = tree(pid);
    const cpuSeconds = sum(pids, (x) => x.cpu);
    const threads = threadCpu(pid);
    const byName = threadCpuByName(pid);
    const statusText = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(statusText)?.[1] ?? 0);
    const anvilCpuSeconds = sum(anvilPids(), (x) => x.cpu) - anvilCpu0;
    // When the chain first had every block ingested and published (wall-clock ms), as /status says.
    const status = (await (
      await fetch(`${apiUrl}/status`, { headers: { accept: 'application/json' } })
    ).json()) as {
      ingest?: {
        evm?: {
          firstCaughtUpAt?: number;
          rpcCalls?: Record<string, number>;
          rpcLimitWaitMs?: { slot: number; pace: number };
        }[];
      };
    };
    const progress = status.ingest?.evm?.[0];
    const caughtUpAt = progress?.firstCaughtUpAt ?? Number.NaN;
    if (process.env.BENCH_CHILD_OUT) {
      writeFileSync(`${process.env.BENCH_CHILD_OUT}-${run.name}.out`, out);
      writeFileSync(`${process.env.BENCH_CHILD_OUT}-${run.name}.err`, errAll);
    }
    return {
      config: run.name,
      configFile: run.config,
      nodeArgs: run.nodeArgs,
      runtime: run.runtime,
      loadavg1mAtSpawn: round(load),
      /** The CPU seconds of a fixed loop just before the spawn: how fast the shared machine's cores ran. */
      machineLoopCpuSeconds: round(speed, 3),
      endToEndSeconds: round(seconds),
      /** Spawn -> the chain's firstCaughtUpAt (every block ingested and published). */
      ingestDoneSeconds: Number.isFinite(caughtUpAt) ? round((caughtUpAt - spawnedAt) / 1000) : null,
      /** The JSON-RPC calls the ingester sent, by method (a batch's members each). */
      rpcCalls: progress?.rpcCalls,
      /** Milliseconds its requests waited for a slot (maxConcurrentRequests) and the pace, summed. */
      rpcLimitWaitMs: progress?.rpcLimitWaitMs,
      cpuSeconds: round(cpuSeconds),
      /**
       * The CLI's CPU seconds by thread: main (ingest, consumers, settle's calls), node (V8's
       * compiler and GC helpers, libuv's pool, the API's thread), engine (chDB's inserts, views,
       * merges and the settle's queries).
       */
      cpuByThread: Object.fromEntries(Object.entries(threads).map(([k, v]) => [k, round(v)])),
      /** The same by thread name and nice value (threads, CPU seconds). */
      cpuByThreadName: Object.fromEntries(
        Object.entries(byName)
          .sort(([, a], [, b]) => b.cpu - a.cpu)
          .map(([k, v]) => [k, { threads: v.threads, cpu: round(v.cpu) }]),
      ),
      peakRssMb: Math.round(Math.max(peakTreeMb, kb('VmHWM') / 1024)),
      anvilCpuSeconds: round(anvilCpuSeconds),
      processes: pids.length,
      /** Resident memory at the end: anonymous (heaps), file-backed (mapped files, shared libraries). */
      rssAtEndMb: { anon: Math.round(kb('RssAnon') / 1024), file: Math.round(kb('RssFile') / 1024) },
      ...(memory.length
        ? {
            /** Spawn -> the first sample with every transfer stored (BENCH_TRACE). */
            storedSeconds: memory.find((m) => m.transfersStored >= run.transfers)?.at ?? null,
            memory,
          }
        : {}),
      /** Tree RSS (MB) every half second from spawn. */
      rssMbEveryHalfSecond: rssTimeline.filter((_, k) => k % 5 === 4),
    };
  } finally {
    if (perf && perf.exitCode === null) {
      perf.kill('SIGINT');
      await new Promise((resolve) => perf.once('close', resolve));
    }
    if (proc.exitCode === null) {
      proc.kill('SIGINT');
      await new Promise((resolve) => proc.once('close', resolve));
    }
  }
}
