/**
 * The benchmarks' common contract (bench/run.ts runs each script as a child process and reads
 * what it wrote):
 * - every script accepts `--size tiny|full` (default full: the sizes the targets are
 *   stated for; tiny: the same code paths in seconds, for the smoke test) and `--out FILE.json`
 *   (default bench/results/<name>-latest.json for full runs, a temp dir for tiny ones, so a tiny
 *   run never replaces committed results);
 * - it writes `{ name, date, size, rows: [{ workload, value, unit, target, ratio, meets }] }`
 *   (extra fields allowed): `value` a finite number in `unit`, `target` the target as text,
 *   `ratio` the value over the target's bound and `meets` whether it is met, both null when the
 *   workload has no target or the target does not apply to this run (a tiny run of a workload
 *   whose target is stated for the full size).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

export type Size = 'tiny' | 'full';
export const SIZES: readonly Size[] = ['tiny', 'full'];

export interface BenchRow {
  workload: string;
  value: number;
  unit: string;
  target: string;
  ratio: number | null;
  meets: boolean | null;
  [extra: string]: unknown;
}

export interface BenchReport {
  name: string;
  date: string;
  size: Size;
  rows: BenchRow[];
  [extra: string]: unknown;
}

/** A target: the value must be at most (`lower`) or at least (`higher`) `bound`. */
export interface Target {
  text: string;
  bound: number;
  better: 'lower' | 'higher';
}

/** Where a script writes by default: committed results for full runs, a temp dir for tiny ones. */
export function defaultOut(name: string, size: Size): string {
  const dir = size === 'full' ? join(import.meta.dirname, 'results') : join(tmpdir(), 'vaultstream-bench');
  return join(dir, `${name}-latest.json`);
}

/**
 * The script's arguments: `--size` and `--out` plus its own string `options` (name -> default,
 * or undefined for none); `sized` gives its size-dependent defaults per size (a flag given wins).
 */
export function benchArgs(
  name: string,
  options: Record<string, string | undefined>,
  sized: Record<Size, Record<string, string>> = { tiny: {}, full: {} },
): { values: Record<string, string>; size: Size; out: string } {
  const { values } = parseArgs({
    options: {
      ...Object.fromEntries(Object.keys(options).map((k) => [k, { type: 'string' as const }])),
      size: { type: 'string', default: 'full' },
      out: { type: 'string' },
    },
  });
  const size = values.size as Size;
  if (!SIZES.includes(size)) throw new Error(`${name}: --size must be tiny or full, not ${values.size}`);
  const merged = { ...withoutUndefined(options), ...sized[size], ...withoutUndefined(values) };
  return {
    values: merged as Record<string, string>,
    size,
    out: (values.out as string | undefined) ?? defaultOut(name, size),
  };
}

function withoutUndefined(o: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

/**
 * One row. `target` is compared only when `applies` (the run has the size the target is stated
 * for); a workload without a target passes `undefined` (shown as 'none').
 */
export function row(
  workload: string,
  value: number,
  unit: string,
  target?: Target,
  applies = true,
  extra: Record<string, unknown> = {},
): BenchRow {
  if (!Number.isFinite(value)) throw new Error(`${workload}: the measured value is ${value}, not a number`);
  const compared = target !== undefined && applies;
  return {
    workload,
    value,
    unit,
    target: target ? `${target.text}${applies ? '' : ' (full size)'}` : 'none',
    // A bound of 0 (a count that must be 0) has no ratio; `meets` alone says.
    ratio: compared && target.bound !== 0 ? round(value / target.bound, 3) : null,
    meets: compared ? (target.better === 'lower' ? value <= target.bound : value >= target.bound) : null,
    ...extra,
  };
}

/** `x` to `digits` decimals. */
export const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** Writes the report (name, date, size, rows and `extra`) to `out` and prints where. */
export function writeReport(
  out: string,
  report: { name: string; size: Size; rows: BenchRow[] } & Record<string, unknown>,
): BenchReport {
  if (report.rows.length === 0) throw new Error(`${report.name}: no rows to report`);
  const { name, size, rows, ...extra } = report;
  const full: BenchReport = { name, date: new Date().toISOString(), size, rows, ...extra };
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(full, null, 2)}\n`);
  console.error(`${name}: wrote ${out}`);
  return full;
}
