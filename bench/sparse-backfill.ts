/**
 * Sparse-chain benchmark: `npx tsx bench/sparse-backfill.ts [--size tiny|full]
 * [--out FILE.json] [--blocks 2000000] [--events 10000] [--spread 10] [--block-time-ms 250]
 * [--max-logs 10000] [--latency-ms 0] [--provider-latency-ms 50] [--timeout-s 600]
 * [--without-log-timestamps 1] [--provider-calls-per-second 2000] [--provider-concurrency 16]
 * [--pipeline-nice 0] [--cli-node-args '...']` (tiny: 20,000 blocks, 200 events, 100 calls a second;
 * `--pipeline-nice`: the CLI's api.pipelineNice; `--cli-node-args`: node flags added for the
 * CLI, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 * Every run is made twice: with answers at once on loopback (`--latency-ms`, where the CLI, the
 * chain server and the baseline's reader share the machine's cores), and with each answer held
 * `--provider-latency-ms` as a provider's round trip would (0: not run), where the ingester's
 * serial round trips show.
 * Serves a deterministic sparse chain on loopback (devnet/sparse-chain.ts: `--events` share
 * Transfer mints spread over `--blocks` blocks four a second, eth_getLogs answers capped at
 * `--max-logs` logs with Alchemy's suggested range), spawns the real CLI on it
 * (`bin/vaultstream.mjs start`, the devnet off) and times spawn -> every transfer stored (the
 * `transfers` view), counting the RPC calls by method, the CLI tree's CPU and peak RSS. Then
 * the same events spread over `--spread` times as many blocks: at the same pace (so over
 * `--spread` times the UTC days, each a day close to find and snapshot), and `--spread` times as
 * fast over the same UTC days (timestamps are whole seconds: at 25 ms, forty blocks share each),
 * what the blocks alone cost. The chain's logs carry their
 * block's `blockTimestamp` (as recent geth, reth and anvil's do: the ingester reads no header for
 * those blocks); with `--without-log-timestamps 1` a fourth run serves `--blocks` blocks with logs
 * lacking it, as many providers do (the event blocks' headers are read, in JSON-RPC batches;
 * `0` skips that run). Last, that run once more behind a provider with a budget of
 * `--provider-calls-per-second` calls (each member of a batch one; over it a request is refused
 * with HTTP 429, as providers throttle), with answers `--provider-latency-ms` away: its ingest
 * time against the least the budget allows (its calls past the first second's, at the budget;
 * `0` skips it). Then that run (no budget) once more with `--provider-concurrency` requests at once
 * (chains[].maxConcurrentRequests, 4 by default: the event blocks' header batches go out that many
 * at a time; `0` skips it). Also timed: reading the same
 * eth_getLogs ranges alone, one after the other (the least any indexer must do; the median of
 * three such reads), against the
 * ingester's own time (its first RPC call -> the end of the round that had every block ingested,
 * `firstCaughtUpAt` of its 'backfill <chain>: done' line, not the line's own time: the line
 * waits for the progress log's next tick). Both sides are served warm (`warmChainServer` reads a
 * throwaway chain first), and the bench asks the CLI nothing while it ingests (the stored count is
 * polled once its 'done' line is out).
 * Targets (full size): calls <= 1.5 x (blocks holding events + UTC days covered + eth_getLogs
 * ranges); ingest time <= 2 x reading the logs alone; calls and ingest time growing <= 1.3 x
 * with the events spread over ten times the blocks (both ways).
 */
import { availableParallelism } from 'node:os';
import { benchArgs, round, row, type Target, writeReport } from './report.ts';
import { warmChainServer } from './sparse-reads.ts';
import { type Run, runOnSparseChain, type SparseRunOptions } from './sparse-run.ts';

const { values, size, out } = benchArgs(
  'sparse-backfill',
  {
    blocks: undefined,
    events: undefined,
    spread: '10',
    'block-time-ms': '250',
    'max-logs': '10000',
    'latency-ms': '0',
    'provider-latency-ms': '50',
    'timeout-s': '600',
    'without-log-timestamps': '1',
    'provider-calls-per-second': '2000',
    'provider-concurrency': '16',
    'pipeline-nice': '0',
    'cli-node-args': '',
  },
  {
    tiny: { blocks: '20000', events: '200', 'provider-calls-per-second': '100' },
    full: { blocks: '2000000', events: '10000' },
  },
);
const events = Number(values.events);

/** One run (bench/sparse-run.ts) with this bench's options, its result logged to stderr. */
async function run(
  latencyMs: number,
  blocks: number,
  more: Partial<
    Pick<SparseRunOptions, 'logTimestamps' | 'blockTimeMs' | 'callsPerSecond' | 'concurrency'>
  > = {},
): Promise<Run> {
  const r = await runOnSparseChain({
    latencyMs,
    blocks,
    events,
    logTimestamps: true,
    blockTimeMs: Number(values['block-time-ms']),
    callsPerSecond: 0,
    concurrency: 0,
    ...more,
    maxLogs: Number(values['max-logs']),
    pipelineNice: Number(values['pipeline-nice']),
    cliNodeArgs: values['cli-node-args'].split(' ').filter(Boolean),
    timeoutS: Number(values['timeout-s']),
  });
  console.error(JSON.stringify(r));
  return r;
}

await warmChainServer({ blocks: Number(values.blocks), events, maxLogs: Number(values['max-logs']) });
const factor = Number(values.spread);
const applies = size === 'full';
const at = (text: string, bound: number): Target => ({ text, bound, better: 'lower' });
const rows = [];
const runs: Run[] = [];
const latencies = [Number(values['latency-ms']), Number(values['provider-latency-ms'])].filter(
  (l, k) => k === 0 || l > 0,
);
for (const latency of latencies) {
  const served = latency ? `, answers ${latency} ms away` : '';
  const base = await run(latency, Number(values.blocks));
  // Ten times the blocks at the same pace: ten times the UTC days too, each a day close to find
  // and snapshot (the call budget counts days).
  const spread = await run(latency, Number(values.blocks) * factor);
  // Ten times the blocks over the same UTC days (ten times as fast: many blocks share a second):
  // what the blocks alone cost.
  const sameDays = await run(latency, Number(values.blocks) * factor, {
    blockTimeMs: Number(values['block-time-ms']) / factor,
  });
  const bare =
    values['without-log-timestamps'] === '0'
      ? undefined
      : await run(latency, Number(values.blocks), { logTimestamps: false });
  const these = bare ? [base, spread, sameDays, bare] : [base, spread, sameDays];
  runs.push(...these);
  for (const r of these) {
    const what = `sparse chain, ${r.blocks.toLocaleString('en')} blocks ${r.blockTimeMs} ms apart (${r.days} UTC days), ${r.events.toLocaleString('en')} events${r.logTimestamps ? '' : ', logs without blockTimestamp'}${served}`;
    rows.push(
      row(`${what}: spawn to all stored`, r.endToEndSeconds, 's', undefined, true, {
        callsByMethod: r.callsByMethod,
      }),
      row(
        `${what}: RPC calls`,
        r.calls,
        'calls',
        at(`≤ 1.5 × (event blocks + days + ranges) = ${r.callBudget}`, r.callBudget),
        applies,
      ),
      row(
        `${what}: ingest time over reading its logs alone (${r.logsAloneSeconds} s)`,
        round(r.ingestSeconds / Math.max(0.001, r.logsAloneSeconds)),
        '×',
        at('≤ 2×', 2),
        applies,
      ),
      // Near 1: the ingest waited on the cores (the CLI's threads and the chain server's), not on
      // the answers.
      row(
        `${what}: CPU in the ingest window (CLI ${r.windowCpu.cli} s, chain server ${r.windowCpu.server} s) over ${availableParallelism()} cores × ${r.windowCpu.seconds} s`,
        r.windowCpu.busy,
        'ratio',
      ),
      row(`${what}: CPU time of the CLI`, r.cpuSeconds, 'CPU-s'),
      row(`${what}: peak RSS of the CLI`, r.peakRssMb, 'MB'),
    );
  }
  for (const [r, how] of [
    [spread, `${spread.days} UTC days against ${base.days}`],
    [sameDays, 'the same UTC days'],
  ] as const) {
    const growth = (what: string, value: number) =>
      row(
        `sparse chain, ${factor}× the blocks, ${how}${served}: ${what} growth`,
        round(value),
        '×',
        at('≤ 1.3×', 1.3),
        applies,
      );
    rows.push(
      growth('RPC calls', r.calls / base.calls),
      growth('ingest time', r.ingestSeconds / base.ingestSeconds),
    );
  }
}
/** The chain without blockTimestamp once more, answers as far away as the last runs', and its first row. */
async function withoutTimestamps(provider: string, callsPerSecond: number, concurrency = 0) {
  const latency = latencies.at(-1) as number;
  const r = await run(latency, Number(values.blocks), { logTimestamps: false, callsPerSecond, concurrency });
  runs.push(r);
  const what = `sparse chain, ${r.blocks.toLocaleString('en')} blocks, ${r.events.toLocaleString('en')} events, logs without blockTimestamp, ${provider}${latency ? `, answers ${latency} ms away` : ''}`;
  rows.push(
    row(`${what}: spawn to all stored`, r.endToEndSeconds, 's', undefined, true, {
      callsByMethod: r.callsByMethod,
    }),
  );
  return { r, what };
}
const budget = Number(values['provider-calls-per-second']);
if (budget > 0) {
  const { r, what } = await withoutTimestamps(
    `behind a provider of ${budget.toLocaleString('en')} calls a second`,
    budget,
  );
  // The least time the budget allows: the calls past the provider's first second, at the budget.
  const least = Math.max(0.001, (r.calls - budget) / budget);
  rows.push(
    row(`${what}: requests refused as over the budget`, r.throttled, 'requests'),
    // No target: the issue sets none for a throttling provider; what it shows is that the backfill
    // ends, and how much of the budget the retries' backoff leaves unused.
    row(
      `${what}: ingest time over the least the budget allows (${round(least, 3)} s)`,
      round(r.ingestSeconds / least),
      '×',
    ),
  );
}
const concurrency = Number(values['provider-concurrency']);
if (concurrency > 0) {
  // The event blocks' headers go out maxConcurrentRequests batches at once: at the service's
  // default (4, for public endpoints) 10,000 headers are 25 round trips. A provider that allows more
  // (a paid plan, an own node) is configured so. No target: the concurrency is the operator's.
  const { r, what } = await withoutTimestamps(
    `${concurrency} requests at once (chains[].maxConcurrentRequests)`,
    0,
    concurrency,
  );
  rows.push(
    row(
      `${what}: ingest time over reading its logs alone (${r.logsAloneSeconds} s)`,
      round(r.ingestSeconds / Math.max(0.001, r.logsAloneSeconds)),
      '×',
    ),
  );
}
writeReport(out, { name: 'sparse-backfill', size, rows, runs });
