/**
 * CPU seconds and resident memory of a process tree from /proc (Linux), for the benchmarks that
 * spawn the CLI (bench/backfill.ts, bench/sparse-backfill.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** user + system CPU seconds and resident MB of `pid` (0 when it is gone). */
export function procStat(pid: number): ReturnType<typeof statAt> {
  return statAt(`/proc/${pid}/stat`);
}

/** A process's or a thread's stat file (`/proc/<pid>[/task/<tid>]/stat`): its name too. */
function statAt(path: string): {
  name: string;
  cpu: number;
  rssMb: number;
  ppid: number;
  pgid: number;
  nice: number;
} {
  try {
    const stat = readFileSync(path, 'utf8');
    const close = stat.lastIndexOf(')');
    const f = stat.slice(close + 2).split(' ');
    // After the name: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) ... nice(16) ... rss(21, pages).
    return {
      name: stat.slice(stat.indexOf('(') + 1, close),
      ppid: Number(f[1]),
      pgid: Number(f[2]),
      cpu: (Number(f[11]) + Number(f[12])) / 100,
      rssMb: (Number(f[21]) * 4096) / 2 ** 20,
      nice: Number(f[16]),
    };
  } catch {
    return { name: '', cpu: 0, rssMb: 0, ppid: -1, pgid: -1, nice: 0 };
  }
}

export function allPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

/** `root` and every process below it. */
export function tree(root: number): number[] {
  const parent = new Map(allPids().map((p) => [p, procStat(p).ppid]));
  const out = [root];
  for (let k = 0; k < out.length; k++) for (const [p, pp] of parent) if (pp === out[k]) out.push(p);
  return out;
}

export const sum = (pids: number[], f: (s: ReturnType<typeof procStat>) => number) =>
  pids.reduce((n, p) => n + f(procStat(p)), 0);

/**
 * CPU seconds of `pid`'s threads, in three parts: its main thread; the other threads Node names
 * `node` (V8's compiler and GC helpers, libuv's pool, worker threads such as the API's); and the
 * threads named otherwise, which are the embedded engine's (chDB names its own).
 */
export function threadCpu(pid: number): { main: number; node: number; engine: number } {
  const out = { main: 0, node: 0, engine: 0 };
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    const t = statAt(`/proc/${pid}/task/${tid}/stat`);
    out[tid === String(pid) ? 'main' : t.name === 'node' ? 'node' : 'engine'] += t.cpu;
  }
  return out;
}

/**
 * CPU seconds of `pid`'s threads by name and nice value (`node@10`: Node's threads lowered below
 * the API's, `node@0`: those left at the process's priority, the API's thread among them), with
 * how many threads each holds; the main thread is `main`.
 */
export function threadCpuByName(pid: number): Record<string, { threads: number; cpu: number }> {
  const out: Record<string, { threads: number; cpu: number }> = {};
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    const t = statAt(`/proc/${pid}/task/${tid}/stat`);
    const key = tid === String(pid) ? 'main' : `${t.name}@${t.nice}`;
    out[key] ??= { threads: 0, cpu: 0 };
    out[key].threads++;
    out[key].cpu += t.cpu;
  }
  return out;
}

/**
 * Samples the CPU seconds of `pid` (all its threads) and of this process every `everyMs` (/proc's
 * ticks are 10 ms: a window's CPU is within a tick or two), for the CPU each used in a window.
 */
export function sampleCpu(pid: number, everyMs = 20) {
  const samples: { at: number; child: number; own: number }[] = [];
  const timer = setInterval(() => {
    const own = process.cpuUsage();
    samples.push({ at: performance.now(), child: procStat(pid).cpu, own: (own.user + own.system) / 1e6 });
  }, everyMs);
  return {
    stop: () => clearInterval(timer),
    /** The CPU used from the last sample at or before `from` to the first at or after `to` (performance.now() ms). */
    within(from: number, to: number): { seconds: number; child: number; own: number } {
      const a = samples.filter((x) => x.at <= from).at(-1) ?? samples[0];
      const b = samples.find((x) => x.at >= to) ?? samples[samples.length - 1];
      return { seconds: (b.at - a.at) / 1000, child: b.child - a.child, own: b.own - a.own };
    },
  };
}

/** The peak resident memory (VmHWM) of `pid`, MB (0 when it is gone). */
export function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

const reaped = new Set<ChildProcess>();
let reaping = false;
/**
 * Kills `child` (SIGKILL) if this process ends first: on exit, and on SIGINT or SIGTERM (then
 * exits 130 or 143). A bench stopped by `timeout` or Ctrl-C left its CLI running, retrying a
 * chain server that was gone, and loading the machine under the next runs.
 */
export function reapOnExit(child: ChildProcess): void {
  // Once per process: the set empties as each child exits, and a bench spawns one per run.
  if (!reaping) {
    reaping = true;
    process.once('exit', () => {
      for (const c of reaped) c.kill('SIGKILL');
    });
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const)
      process.once(signal, () => process.exit(code));
  }
  reaped.add(child);
  child.once('exit', () => reaped.delete(child));
}
