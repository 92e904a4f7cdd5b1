/**
 * The benchmarks cannot rot: `bench/run.ts --size tiny` runs every benchmark script at a tiny
 * size (real anvil, chDB, the CLI, the Kafka mock) into a temp dir, and each must write a report
 * of the documented shape (bench/report.ts): rows with a workload, a finite numeric value, a
 * unit, a target text, a ratio and a meets (both null, or a number and a boolean). Timings are
 * never asserted: only that every script ran and reported.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaToolchainProblem } from '../../devnet/kafka-mock.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const KAFKA_PROBLEM = kafkaToolchainProblem();
/** Every benchmark the run must report (pipeline-kafka needs gcc and librdkafka-dev). */
const SCRIPTS = [
  'backfill',
  'api',
  'token-holders',
  'startup',
  'live',
  'events',
  'devnet-disk',
  'anvil-memory',
  'pipeline-embedded',
  ...(KAFKA_PROBLEM ? [] : ['pipeline-kafka']),
  'evm-backfill',
  'sparse-backfill',
  'engine',
  'views',
  'sql-contention',
  'solana',
  'sql-worst-analyst',
];

const outDir = mkdtempSync(join(tmpdir(), 'vs-bench-smoke-'));
let run: { status: number | null; stdout: string; stderr: string };

/** `bench/run.ts --size tiny --quiet --out-dir dir ...args`. */
function runBench(dir: string, args: string[]): Promise<typeof run> {
  const argv = [
    '--import',
    'tsx',
    join(ROOT, 'bench', 'run.ts'),
    '--size',
    'tiny',
    '--quiet',
    '--out-dir',
    dir,
  ];
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...argv, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-20_000)));
    child.on('error', fail);
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

beforeAll(async () => {
  if (KAFKA_PROBLEM) console.warn(`bench smoke: pipeline-kafka skipped: ${KAFKA_PROBLEM}`);
  run = await runBench(outDir, KAFKA_PROBLEM ? ['--skip', 'pipeline-kafka'] : []);
}, 600_000);

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

const report = (name: string) => JSON.parse(readFileSync(join(outDir, `${name}-latest.json`), 'utf8'));

describe('bench/run.ts --size tiny', () => {
  it('runs every benchmark without a failure and prints one table of their rows', () => {
    expect(run.status, `stdout:\n${run.stdout}\nstderr (tail):\n${run.stderr.slice(-4000)}`).toBe(0);
    expect(run.stdout).not.toContain('FAILED');
    const header = run.stdout.split('\n').find((l) => l.includes('workload'));
    for (const column of ['bench', 'workload', 'value', 'unit', 'target', 'ratio', 'meets'])
      expect(header).toContain(column);
    for (const name of SCRIPTS) expect(run.stdout).toContain(` ${name} `);
  });

  it.each(SCRIPTS)('%s wrote a report whose rows have the documented fields', (name) => {
    const r = report(name);
    expect(r.name).toBe(name);
    expect(r.size).toBe('tiny');
    expect(Number.isNaN(Date.parse(r.date))).toBe(false);
    expect(r.rows.length).toBeGreaterThan(0);
    for (const row of r.rows) {
      expect(typeof row.workload === 'string' && row.workload.length > 0, JSON.stringify(row)).toBe(true);
      expect(Number.isFinite(row.value), `${row.workload}: value ${row.value}`).toBe(true);
      expect(typeof row.unit === 'string' && row.unit.length > 0, `${row.workload}: unit`).toBe(true);
      expect(typeof row.target === 'string' && row.target.length > 0, `${row.workload}: target`).toBe(true);
      // A ratio to a bound of 0 means nothing: such a row (a count that must be 0) says meets alone.
      if (row.ratio === null && !/^(<= |≤ |= )?0$/.test(row.target))
        expect(row.meets, `${row.workload}: meets without a ratio`).toBeNull();
      else if (row.ratio === null) expect(typeof row.meets, `${row.workload}: meets`).toBe('boolean');
      else {
        expect(Number.isFinite(row.ratio), `${row.workload}: ratio ${row.ratio}`).toBe(true);
        expect(typeof row.meets, `${row.workload}: meets`).toBe('boolean');
      }
    }
  });

  it('writes the combined latest.json with every row, tagged with its benchmark', () => {
    const all = JSON.parse(readFileSync(join(outDir, 'latest.json'), 'utf8'));
    expect(all.size).toBe('tiny');
    expect(all.scripts.map((s: { name: string }) => s.name)).toEqual(SCRIPTS);
    expect(all.scripts.filter((s: { error?: string }) => s.error)).toEqual([]);
    const expected = SCRIPTS.flatMap((name) =>
      report(name).rows.map((row: object) => ({ bench: name, ...row })),
    );
    expect(all.rows).toEqual(expected);
  });

  it('runs every script of bench/ (a file no other bench file imports is a script)', () => {
    const all = readdirSync(join(ROOT, 'bench')).filter((f) => f.endsWith('.ts'));
    // A module run.ts itself imports (the BENCHMARKS.md writer), or a child another script forks
    // by its file name, is no script either.
    const text = (files: string[]) =>
      files.map((f) => readFileSync(join(ROOT, 'bench', f), 'utf8')).join('\n');
    const sources = text(all);
    const scriptSources = text(all.filter((f) => f !== 'run.ts'));
    const named = (f: string) => sources.includes(`'./${f}'`) || scriptSources.includes(`'${f}'`);
    const scripts = all.filter((f) => f !== 'run.ts' && !named(f));
    const ran = new Set(
      JSON.parse(readFileSync(join(outDir, 'latest.json'), 'utf8')).scripts.map(
        (s: { file: string }) => s.file,
      ),
    );
    expect(scripts.length).toBeGreaterThan(5);
    for (const f of scripts)
      expect(ran.has(`bench/${f}`), `bench/${f} is not run by bench/run.ts`).toBe(true);
  });
});

describe('bench/run.ts when a script fails', () => {
  it('shows the error in the table, records it and exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vs-bench-fail-'));
    try {
      // Far too short for any script: it is stopped (with what it started) and counts as failed.
      const failed = await runBench(dir, ['--only', 'startup', '--timeout-s', '0.2']);
      expect(failed.status).toBe(1);
      expect(failed.stdout).toMatch(/startup +│ FAILED \([\d.]+ s\): timed out after 0\.2 s/);
      const all = JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8'));
      expect(all.scripts).toHaveLength(1);
      expect(all.scripts[0].error).toMatch(/^timed out after 0\.2 s/);
      expect(all.rows).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
