/**
 * `npm run bench`: the repository's benchmarks, with results printed as a table and
 * written to bench/results/latest.json. Sizes can be reduced for a quick look:
 * `npm run bench -- --events 200000`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { PipelineBenchResult } from './pipeline.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    vaults: { type: 'string', default: '50' },
    only: { type: 'string' },
  },
});
const events = Number(values.events);
const vaults = Number(values.vaults);

const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  node: process.version,
  events,
  vaults,
};
const rows: PipelineBenchResult[] = [];
if (!values.only || values.only === 'embedded') {
  // Each pipeline run uses its own process: chDB binds one data directory per process.
  rows.push(await runChild(['embedded']));
}
if (!values.only || values.only === 'kafka') {
  rows.push(await runChild(['kafka']));
}
results.pipeline = rows;

async function runChild(args: string[]): Promise<PipelineBenchResult> {
  const { spawnSync } = await import('node:child_process');
  const out = spawnSync(
    process.execPath,
    [
      // As `npm start` and bin/vaultstream.mjs run the service (see there).
      '--max-semi-space-size=64',
      '--import',
      'tsx',
      join(import.meta.dirname, 'pipeline-main.ts'),
      ...args,
      String(events),
      String(vaults),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 },
  );
  if (out.status !== 0) throw new Error(`benchmark ${args[0]} failed (exit ${out.status})`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!);
}

console.log('\npipeline: publish to queryable in the views (transfer events)');
console.table(
  rows.map((r) => ({
    bus: r.bus,
    events: r.events,
    'publish s': r.publishSeconds.toFixed(1),
    'end-to-end s': r.endToEndSeconds.toFixed(1),
    'events/s': r.eventsPerSecond,
    'peak RSS MB': r.peakRssMb,
    // Every thread of the process (chDB's too): steadier than wall time on a shared machine.
    'CPU s': r.cpuSeconds.toFixed(1),
  })),
);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(join(import.meta.dirname, 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
