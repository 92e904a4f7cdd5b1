/**
 * One run of bench/sparse-backfill.ts (its header says what each number is): the real CLI
 * (`bin/vaultstream.mjs start`, the devnet off) spawned on a sparse chain served from this process
 * (devnet/sparse-chain.ts), timed from spawn to every transfer stored, with the RPC calls by
 * method, the ingest time against reading the same eth_getLogs ranges alone
 * (bench/sparse-reads.ts), the CPU within the ingest window, the CLI's CPU and peak RSS.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sparseChainConfig, sparseVaultConfig, startSparseChain } from '../devnet/sparse-chain.ts';
import { peakRssMb, reapOnExit, sampleCpu, sum, tree } from './proc-tree.ts';
import { round } from './report.ts';
import { medianLogsAlone } from './sparse-reads.ts';

const ROOT = join(import.meta.dirname, '..');
const DAY = 86_400;

export interface SparseRunOptions {
  /** Held before each answer, ms. */
  latencyMs: number;
  blocks: number;
  events: number;
  /** Whether the chain's logs carry `blockTimestamp`. */
  logTimestamps: boolean;
  blockTimeMs: number;
  /** The provider's budget of calls a second (0: none). */
  callsPerSecond: number;
  /** The chain's maxConcurrentRequests (0: the service's default). */
  concurrency: number;
  /** The cap on logs per eth_getLogs answer. */
  maxLogs: number;
  /** The CLI's api.pipelineNice. */
  pipelineNice: number;
  /** Node flags added for the CLI. */
  cliNodeArgs: string[];
  timeoutS: number;
}

export interface Run {
  blocks: number;
  /** Time between two blocks, ms (timestamps are whole seconds: several blocks may share one). */
  blockTimeMs: number;
  /** Whether the chain's logs carried `blockTimestamp`. */
  logTimestamps: boolean;
  /** Held before each answer, ms. */
  latencyMs: number;
  /** The provider's budget of calls a second (0: none). */
  callsPerSecond: number;
  /** The chain's maxConcurrentRequests (the service's default when 0). */
  concurrency: number;
  /** Requests the provider refused as over its budget (HTTP 429). */
  throttled: number;
  events: number;
  eventBlocks: number;
  days: number;
  logRanges: number;
  calls: number;
  callsByMethod: Record<string, number>;
  /** 1.5 x (event blocks + days + eth_getLogs ranges). */
  callBudget: number;
  endToEndSeconds: number;
  ingestSeconds: number;
  logsAloneSeconds: number;
  cpuSeconds: number;
  /** CPU seconds of the CLI and of the chain server (this process) within the ingest window. */
  windowCpu: WindowCpu;
  peakRssMb: number;
}

/** The CPU seconds of the CLI and of the chain server (this process) within the ingest window. */
interface WindowCpu {
  seconds: number;
  cli: number;
  server: number;
  /** (cli + server) over the machine's cores x seconds: near 1, the window waited on CPU. */
  busy: number;
}

export async function runOnSparseChain(o: SparseRunOptions): Promise<Run> {
  const { latencyMs, blocks, events, logTimestamps, blockTimeMs, callsPerSecond, concurrency } = o;
  const chain = await startSparseChain({
    blocks,
    events,
    logTimestamps,
    blockTimeMs,
    maxLogs: o.maxLogs,
    latencyMs,
    maxCallsPerSecond: callsPerSecond,
  });
  const root = mkdtempSync(join(tmpdir(), 'vs-sparse-bench-'));
  let child: ChildProcess | undefined;
  try {
    const dataDir = join(root, 'data');
    const configFile = join(root, 'config.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        dataDir,
        logLevel: 'info',
        ingest: { progressLogIntervalMs: 200 },
        devnet: { enabled: false },
        // The CLI at the priority of the chain server and of the baseline's reader (this process):
        // at the service's default (api.pipelineNice 10) its ingester yields the cores to every
        // other process of the machine, and on a shared one its time measures their load.
        api: { pipelineNice: o.pipelineNice },
        // The ingester's own cost, not a request rate of its own (chains[].maxRequestsPerSecond 0),
        // on a provider with no block-span limit, only a cap on logs per answer (as Alchemy's).
        chains: [sparseChainConfig(chain.url, concurrency)],
        vaults: [sparseVaultConfig(chain.token)],
      }),
    );
    const started = performance.now();
    const proc = spawn(
      process.execPath,
      [
        '--max-semi-space-size=16',
        ...o.cliNodeArgs,
        join(ROOT, 'bin', 'vaultstream.mjs'),
        'start',
        '--config',
        configFile,
      ],
      {
        cwd: ROOT,
        env: {
          // The bin's shebang, npm start and the Docker image set it (README "Architecture").
          UV_THREADPOOL_SIZE: '16',
          ...process.env,
          VAULTSTREAM__sql__http__port: '0',
          API_PORT: '0',
          LOG_FORMAT: '',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    child = proc;
    reapOnExit(proc);
    let err = '';
    /** Wall-clock ms the ingester had every block ingested (its own clock, from its 'done' line). */
    let ingestDoneAt = 0;
    proc.stderr?.on('data', (d) => {
      if (process.env.BENCH_CHILD_ERR) process.stderr.write(d);
      err = (err + d).slice(-20_000);
      if (ingestDoneAt) return;
      const line = err.split('\n').find((l) => l.includes('backfill sparse: done'));
      // The line comes at the progress log's next tick (up to ingest.progressLogIntervalMs later):
      // its firstCaughtUpAt field is when the round that caught up ended.
      if (line) ingestDoneAt = (JSON.parse(line) as { firstCaughtUpAt: number }).firstCaughtUpAt;
    });
    const pid = proc.pid as number;
    let peakTree = 0;
    // The chain is served from this process: a walk of all of /proc now and then, not every tick.
    let pids = [pid];
    let ticks = 0;
    const sampler = setInterval(() => {
      if (ticks++ % 8 === 0) pids = tree(pid);
      peakTree = Math.max(
        peakTree,
        sum(pids, (s) => s.rssMb),
      );
    }, 250);
    // The CLI's and this process's (the chain server's) CPU, for their CPU within the ingest window.
    const cpu = sampleCpu(pid);
    const deadline = Date.now() + o.timeoutS * 1000;
    let sqlUrl = '';
    let stored = 0;
    const sql = async (q: string) =>
      (
        await (
          await fetch(`${sqlUrl}/?query=${encodeURIComponent(q)}`, { signal: AbortSignal.timeout(10_000) })
        ).text()
      ).trim();
    for (;;) {
      if (Date.now() > deadline || proc.exitCode !== null)
        throw new Error(`not done (stored ${stored}/${events}); stderr:\n${err.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
      try {
        sqlUrl ||= (JSON.parse(readFileSync(join(dataDir, 'sql-http.json'), 'utf8')) as { url: string }).url;
      } catch {
        continue;
      }
      // The count (a FINAL read in the CLI's engine and an HTTP answer on its event loop) is asked
      // only once the ingester is done: every event is published by then, and not all can be stored
      // before. Asked during the ingest (once a second, as before), it landed in the ingest it times
      // (~0.3 s on the 2M chain) one run in three or so, and that run was slower by up to 2x.
      if (!ingestDoneAt) continue;
      try {
        stored = Number(await sql('SELECT count() FROM vaultstream.transfers'));
        if (stored === events) break;
      } catch {
        // not serving yet
      }
    }
    const endToEndSeconds = (performance.now() - started) / 1000;
    const callsByMethod = Object.fromEntries([...chain.counts].sort());
    const calls = [...chain.counts.values()].reduce((a, b) => a + b, 0);
    clearInterval(sampler);
    cpu.stop();
    const used = cpu.within(chain.firstRequestAt, ingestDoneAt - performance.timeOrigin);
    const busy = round((used.child + used.own) / (availableParallelism() * Math.max(0.001, used.seconds)));
    const windowCpu: WindowCpu = {
      seconds: round(used.seconds, 3),
      cli: round(used.child, 3),
      server: round(used.own, 3),
      busy,
    };
    const cpuSeconds = sum(tree(pid), (s) => s.cpu);
    const peak = Math.max(peakTree, peakRssMb(pid));
    proc.kill('SIGINT');
    await new Promise((r) => proc.once('close', r));
    child = undefined;
    const eventBlocks = new Set(chain.eventBlocks).size;
    const days = Math.floor(chain.timeOf(chain.head) / DAY) - Math.floor(chain.timeOf(0) / DAY) + 1;
    const logRanges = chain.logRanges.length;
    return {
      blocks,
      blockTimeMs,
      logTimestamps,
      latencyMs,
      callsPerSecond,
      concurrency,
      throttled: chain.throttled,
      events,
      eventBlocks,
      days,
      logRanges,
      calls,
      callsByMethod,
      callBudget: Math.floor(1.5 * (eventBlocks + days + logRanges)),
      endToEndSeconds: round(endToEndSeconds),
      // First RPC call -> every block up to the head ingested (its records durable on the bus).
      ingestSeconds: round(
        ((ingestDoneAt || Date.now()) - (performance.timeOrigin + chain.firstRequestAt)) / 1000,
        3,
      ),
      logsAloneSeconds: round(await medianLogsAlone(chain), 3),
      cpuSeconds: round(cpuSeconds),
      windowCpu,
      peakRssMb: Math.round(peak),
    };
  } finally {
    child?.kill('SIGKILL');
    await chain.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
