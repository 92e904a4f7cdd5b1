/**
 * `npm run bench`: every benchmark, each in its own process (chDB binds one data directory per
 * process), one table of every workload with its target, the ratio to it and whether it is met.
 *
 *   npm run bench                            # full sizes (many minutes): bench/results/
 *   npm run bench -- --size tiny             # every benchmark at a tiny size (seconds): a temp dir
 *   npm run bench -- --only backfill,startup # some of them (also: pipeline, embedded, kafka)
 *
 * Options: `--size tiny|full` (default full), `--only a,b`, `--skip a,b`, `--out-dir DIR` (where
 * each script's `<name>-latest.json` and the combined `latest.json` go; default bench/results for
 * full runs and a new temp dir for tiny ones, so a tiny run never replaces committed results),
 * `--events N` and `--vaults V` (the pipeline's), `--timeout-s S` per script, `--jobs N` (scripts
 * at once: 1 for full runs, whose timings must not overlap, 2 for tiny ones), `--quiet` (the
 * scripts' own output only when one fails). Every script follows bench/report.ts' contract. A
 * script that fails, or writes no valid rows, shows its error in the table and makes the run exit 1;
 * a target not met does not (the table says so).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import { writeBenchmarksDoc } from './markdown.ts';
import type { BenchRow, Size } from './report.ts';

interface Script {
  name: string;
  file: string;
  args?: string[];
}

/** The rows with targets first, then the diagnostics (no targets). */
const SCRIPTS: Script[] = [
  { name: 'backfill', file: 'backfill.ts' },
  { name: 'api', file: 'api.ts' },
  { name: 'token-holders', file: 'token-holders.ts' },
  { name: 'startup', file: 'startup.ts' },
  { name: 'live', file: 'live.ts' },
  { name: 'events', file: 'events.ts' },
  { name: 'devnet-disk', file: 'diagnostics/devnet-disk.ts' },
  { name: 'anvil-memory', file: 'diagnostics/anvil-memory.ts' },
  { name: 'pipeline-embedded', file: 'pipeline-main.ts', args: ['--bus', 'embedded'] },
  { name: 'pipeline-kafka', file: 'pipeline-main.ts', args: ['--bus', 'kafka'] },
  { name: 'evm-backfill', file: 'evm-backfill.ts' },
  { name: 'sparse-backfill', file: 'sparse-backfill.ts' },
  { name: 'engine', file: 'engine.ts' },
  { name: 'views', file: 'views.ts' },
  { name: 'sql-contention', file: 'sql-contention.ts' },
  { name: 'solana', file: 'solana.ts' },
  { name: 'sql-worst-analyst', file: 'sql-worst-analyst.ts' },
];

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'full' },
    only: { type: 'string' },
    skip: { type: 'string' },
    'out-dir': { type: 'string' },
    events: { type: 'string' },
    vaults: { type: 'string' },
    'timeout-s': { type: 'string' },
    jobs: { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
});
const size = values.size as Size;
if (size !== 'tiny' && size !== 'full') throw new Error(`--size must be tiny or full, not ${values.size}`);
const HERE = import.meta.dirname;
const ROOT = join(HERE, '..');
const outDir =
  values['out-dir'] ?? (size === 'full' ? join(HERE, 'results') : mkdtempSync(join(tmpdir(), 'vs-bench-')));
mkdirSync(outDir, { recursive: true });
const timeoutMs = Number(values['timeout-s'] ?? (size === 'full' ? 1800 : 180)) * 1000;
// Full runs one at a time (they measure); tiny ones two at a time (they only check the scripts run).
const jobs = Math.max(1, Number(values.jobs ?? (size === 'full' ? 1 : 2)));

/**
 * `name` is one of `list` (comma-separated): the whole name, its part before a dash (`pipeline`:
 * both pipelines), or a pipeline's bus (`embedded`, `kafka`, as before the table).
 */
const named = (list: string | undefined, name: string) =>
  (list ?? '')
    .split(',')
    .filter(Boolean)
    .some((n) => n === name || name.startsWith(`${n}-`) || name === `pipeline-${n}`);
const chosen = SCRIPTS.filter(
  (s) => (!values.only || named(values.only, s.name)) && !named(values.skip, s.name),
);
if (chosen.length === 0)
  throw new Error(`no benchmark matches --only ${values.only} (${SCRIPTS.map((s) => s.name)})`);

interface Outcome {
  name: string;
  file: string;
  date: string;
  seconds: number;
  /** The machine's 1-minute load average as the script started and ended (the machine is shared). */
  loadavg1m: [number, number];
  rows: BenchRow[];
  error?: string;
}

/** Runs one script; its output goes to stderr as it comes (with --quiet: only if it fails). */
function runScript(s: Script): Promise<Outcome> {
  const out = join(outDir, `${s.name}-latest.json`);
  rmSync(out, { force: true });
  const args = [...(s.args ?? []), '--size', size, '--out', out];
  if (s.file === 'pipeline-main.ts') {
    if (values.events) args.push('--events', values.events);
    if (values.vaults) args.push('--vaults', values.vaults);
  }
  const t0 = performance.now();
  const date = new Date().toISOString();
  const load0 = loadavg()[0];
  console.error(`\n==> ${s.name}: bench/${s.file} ${args.join(' ')}`);
  return new Promise((resolve) => {
    // As `npm start` and bin/vaultstream.mjs run the service; its own process group, so that a
    // timeout ends the script and everything it started.
    const child = spawn(
      process.execPath,
      ['--max-semi-space-size=16', '--import', 'tsx', join(HERE, s.file), ...args],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let tail = '';
    const take = (d: Buffer) => {
      tail = (tail + d.toString()).slice(-4000);
      if (!values.quiet) process.stderr.write(d);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    const done = (error: string | undefined) => {
      clearTimeout(timer);
      const seconds = Number(((performance.now() - t0) / 1000).toFixed(1));
      if (error && values.quiet) process.stderr.write(`${s.name} output (tail):\n${tail}\n`);
      const loadavg1m: [number, number] = [load0, loadavg()[0]];
      resolve({ name: s.name, file: `bench/${s.file}`, date, seconds, loadavg1m, ...readRows(out, error) });
    };
    child.on('error', (err) => done(`could not start: ${err.message}`));
    child.on('close', (code, signal) => {
      killGroup(child.pid); // anything it left behind
      const said = lastLine(tail);
      if (timedOut) done(`timed out after ${timeoutMs / 1000} s${said ? `; last said: ${said}` : ''}`);
      else if (code !== 0) done(`exit ${code ?? signal}: ${lastLine(tail)}`);
      else done(undefined);
    });
  });
}

function killGroup(pid: number | undefined): void {
  try {
    if (pid) process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The last line that says something (an error's message rather than Node's version banner). */
function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^Node\.js v\d|^at /.test(l));
  const errors = lines.filter((l) => /error|failed|cannot/i.test(l));
  return (errors.at(-1) ?? lines.at(-1) ?? '').slice(0, 200);
}

/** The rows the script wrote to `file`, or why they are missing or not as the contract says. */
function readRows(file: string, error: string | undefined): { rows: BenchRow[]; error?: string } {
  if (error) return { rows: [], error };
  if (!existsSync(file))
    return { rows: [], error: `wrote no ${relative(ROOT, file)} (does it support --out?)` };
  let report: { rows?: unknown };
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { rows: [], error: `${file}: ${(err as Error).message}` };
  }
  const rows = report.rows;
  if (!Array.isArray(rows) || rows.length === 0) return { rows: [], error: `${file} has no rows` };
  const bad = rows.map(rowProblem).find(Boolean);
  return bad ? { rows: [], error: `${file}: ${bad}` } : { rows: rows as BenchRow[] };
}

/** What is wrong with a row, by the contract (bench/report.ts), or undefined. */
function rowProblem(r: Record<string, unknown>): string | undefined {
  if (typeof r.workload !== 'string' || !r.workload) return 'a row without a workload';
  if (typeof r.value !== 'number' || !Number.isFinite(r.value)) return `${r.workload}: value ${r.value}`;
  if (typeof r.unit !== 'string') return `${r.workload}: no unit`;
  if (typeof r.target !== 'string') return `${r.workload}: no target text`;
  if (r.ratio !== null && !(typeof r.ratio === 'number' && Number.isFinite(r.ratio)))
    return `${r.workload}: ratio ${r.ratio}`;
  if (r.meets !== null && typeof r.meets !== 'boolean') return `${r.workload}: meets ${r.meets}`;
  return undefined;
}

/** A value with the digits that matter: 12,345 / 123.4 / 1.23 / 0.123. */
const fmt = (x: number) =>
  Math.abs(x) >= 1000
    ? Math.round(x).toLocaleString('en')
    : Number(x.toPrecision(Math.abs(x) >= 100 ? 4 : 3)).toString();

const loadBefore = loadavg()[0];
const started = new Date();
const outcomes: Outcome[] = new Array(chosen.length);
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(jobs, chosen.length) }, async () => {
    while (next < chosen.length) {
      const i = next++;
      outcomes[i] = await runScript(chosen[i]);
    }
  }),
);

const table = new Table({
  head: ['bench', 'workload', 'value', 'unit', 'target', 'ratio', 'meets'],
  colAligns: ['left', 'left', 'right', 'left', 'left', 'right', 'left'],
  style: { head: [], border: [] },
  // No rule between rows: one line per workload where it fits.
  chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  wordWrap: true,
  colWidths: [null, 64, null, null, null, null, null],
});
for (const o of outcomes) {
  if (o.error) table.push([o.name, `FAILED (${o.seconds} s): ${o.error}`, '', '', '', '', '']);
  for (const r of o.rows)
    table.push([
      o.name,
      r.workload,
      fmt(r.value),
      r.unit,
      r.target,
      r.ratio === null ? '' : r.ratio.toFixed(2),
      r.meets === null ? '' : r.meets ? 'yes' : 'NO',
    ]);
}
const load = `load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after, ${cpus().length} cores`;
console.log(`\nbenchmarks, ${size} size (${load}); ratio = value / the target's bound`);
console.log(table.toString());

const untagged = ({ bench: _, ...r }: BenchRow & { bench: string }): BenchRow => r;

/** The benchmarks of an earlier combined file of this size, with their rows. */
function previousRun(file: string): Outcome[] {
  try {
    const prev = JSON.parse(readFileSync(file, 'utf8'));
    if (prev.size !== size || !Array.isArray(prev.scripts) || !Array.isArray(prev.rows)) return [];
    return prev.scripts
      .filter((o: Outcome) => SCRIPTS.some((s) => s.name === o.name))
      .map((o: Outcome) => ({
        ...o,
        rows: prev.rows.filter((r: { bench: string }) => r.bench === o.name).map(untagged),
      }));
  } catch {
    return []; // none yet, or not this shape
  }
}

// The combined file keeps the latest run of every benchmark: a run of some of them (--only)
// replaces theirs and keeps the others' (each with its own date).
const combined = join(outDir, 'latest.json');
const kept = previousRun(combined).filter((o) => !outcomes.some((n) => n.name === o.name));
const all = [...kept, ...outcomes].sort(
  (a, b) => SCRIPTS.findIndex((s) => s.name === a.name) - SCRIPTS.findIndex((s) => s.name === b.name),
);
const scripts = all.map(({ rows: _, ...o }) => o);
const rows = all.flatMap((o) => o.rows.map((r) => ({ bench: o.name, ...r })));
const summary = {
  name: 'all',
  date: started.toISOString(),
  size,
  node: process.version,
  cpus: cpus().length,
};
writeFileSync(combined, `${JSON.stringify({ ...summary, scripts, rows }, null, 2)}\n`);

console.log(`wrote ${combined}`);
// The committed results: BENCHMARKS.md's results section follows them.
if (resolve(outDir) === resolve(HERE, 'results')) {
  writeBenchmarksDoc(join(ROOT, 'BENCHMARKS.md'), combined);
  console.log(`wrote ${join(ROOT, 'BENCHMARKS.md')}`);
}
const failed = outcomes.filter((o) => o.error);
if (failed.length) {
  console.error(`failed: ${failed.map((o) => o.name).join(', ')}`);
  process.exitCode = 1;
}
