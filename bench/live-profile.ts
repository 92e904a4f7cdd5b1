/**
 * Where one of the service's threads spent a time window, from the V8 CPU profile it writes at
 * exit (`node --cpu-prof`, bench/live.ts `--cpu-profile true`): self time per function and per
 * place (a package of node_modules, a project directory, Node's internals, or V8's own
 * categories: `(garbage collector)`, `(program)`, `(idle)`). The window is located from the end:
 * the profile ends as the process exits, `msBeforeExit` before which the window ended.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  windowMs: number;
  sampledMs: number;
  /** Share of the window's samples (percent), highest first. */
  byPlace: { place: string; percent: number }[];
  topFunctions: { fn: string; percent: number }[];
  /** Stretches in which the main thread never went idle (GC included), as long as a request waits behind them. */
  busy: BusyStretches;
}

/** The window's busy stretches (consecutive samples none of which is idle) of at least LONG_MS. */
export interface BusyStretches {
  /** Stretches of at least LONG_MS, and their time in all (ms). */
  count: number;
  totalMs: number;
  /** The longest ones: ms, and the functions on the stack for most of it (inclusive ms, project and package frames). */
  longest: { ms: number; onStack: { fn: string; ms: number }[] }[];
  /** Over all those stretches: the functions on the stack (inclusive ms), most first. */
  onStack: { fn: string; ms: number }[];
}

/** A busy stretch this long or longer is reported (ms). */
const LONG_MS = 3;

/** The place of a script URL: `chdb` (a package), `api/http` (a project directory), `node:` or a V8 category. */
function placeOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node:';
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1];
  const rel = relative(ROOT, path);
  return rel.startsWith('..') ? path : rel.split('/').slice(0, -1).join('/') || rel;
}

/** A script URL as a project-relative path (or the package-relative one under node_modules). */
function placeOfFile(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/(.*)$/.exec(path);
  if (pkg) return pkg[1];
  const rel = relative(ROOT, path);
  return rel.startsWith('..') ? path : rel;
}

/**
 * The summary of one thread's `.cpuprofile` in `dir` over [end - msBeforeExit - windowMs, end -
 * msBeforeExit]: the main thread's (`main`), or the largest of the worker threads' (`worker`:
 * the API's own thread under `api.thread: worker`); undefined when there is none.
 */
export function summarizeProfile(
  dir: string,
  windowMs: number,
  msBeforeExit: number,
  thread: 'main' | 'worker' = 'main',
): ProfileSummary | undefined {
  // Node names each thread's file CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; the main thread is 0.
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .filter((f) => (f.split('.').at(-3) === '0') === (thread === 'main'));
  if (!files.length) return undefined;
  const [file] = files
    .map((f) => ({ f, size: readFileSync(join(dir, f)).length }))
    .sort((a, b) => b.size - a.size);
  const p = JSON.parse(readFileSync(join(dir, file.f), 'utf8')) as CpuProfile;
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const to = p.endTime - msBeforeExit * 1000;
  const from = to - windowMs * 1000;
  const self = new Map<number, number>();
  let t = p.startTime;
  let total = 0;
  const seq: [number, number][] = [];
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const next = i + 1 < p.timeDeltas.length ? p.timeDeltas[i + 1] : 0;
    if (t < from || t > to) continue;
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + next);
    total += next;
    seq.push([p.samples[i], next]);
  }
  const byPlace = new Map<string, number>();
  const byFn = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = (nodes.get(id) as ProfileNode).callFrame;
    const fn = functionName || '(anonymous)';
    const place = placeOf(url, fn);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    const file = url.startsWith('node:') ? url : url ? placeOfFile(url) : place;
    const where = url ? `${file}:${lineNumber + 1}` : place;
    byFn.set(`${fn} ${where}`, (byFn.get(`${fn} ${where}`) ?? 0) + us);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => [k, Number(((100 * us) / Math.max(1, total)).toFixed(1))] as const);
  return {
    windowMs,
    sampledMs: Math.round(total / 1000),
    byPlace: top(byPlace, 12).map(([place, percent]) => ({ place, percent })),
    topFunctions: top(byFn, 15).map(([fn, percent]) => ({ fn, percent })),
    busy: busyStretches(p.nodes, seq),
  };
}

/** The frame's name as reported: function and project-relative (or package-relative) place. */
function frameName(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  const fn = functionName || '(anonymous)';
  if (!url) return fn;
  const file = url.startsWith('node:') ? url : placeOfFile(url);
  return `${fn} ${file}:${lineNumber + 1}`;
}

/**
 * Stretches of consecutive non-idle samples (`seq`: node id and the time until the next sample),
 * of at least LONG_MS, with the frames on the stack during them (each frame once per sample,
 * Node's internals left out: every task has them).
 */
function busyStretches(nodes: ProfileNode[], seq: [number, number][]): BusyStretches {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = new Map<number, string[]>();
  const stack = (id: number): string[] => {
    const known = stackOf.get(id);
    if (known) return known;
    const names = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = byId.get(at) as ProfileNode;
      if (n.callFrame.url && !n.callFrame.url.startsWith('node:')) names.add(frameName(n));
    }
    const list = [...names];
    stackOf.set(id, list);
    return list;
  };
  const idle = (id: number) => byId.get(id)?.callFrame.functionName === '(idle)';
  const stretches: { us: number; onStack: Map<string, number> }[] = [];
  let cur: { us: number; onStack: Map<string, number> } | undefined;
  const close = () => {
    if (cur && cur.us >= LONG_MS * 1000) stretches.push(cur);
    cur = undefined;
  };
  for (const [id, us] of seq) {
    if (idle(id)) {
      close();
      continue;
    }
    cur ??= { us: 0, onStack: new Map() };
    cur.us += us;
    for (const f of stack(id)) cur.onStack.set(f, (cur.onStack.get(f) ?? 0) + us);
  }
  close();
  const topOf = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([fn, us]) => ({ fn, ms: Math.round(us / 100) / 10 }));
  const all = new Map<string, number>();
  for (const s of stretches) for (const [f, us] of s.onStack) all.set(f, (all.get(f) ?? 0) + us);
  return {
    count: stretches.length,
    totalMs: Math.round(stretches.reduce((a, s) => a + s.us, 0) / 1000),
    longest: [...stretches]
      .sort((a, b) => b.us - a.us)
      .slice(0, 8)
      .map((s) => ({ ms: Math.round(s.us / 100) / 10, onStack: topOf(s.onStack, 6) })),
    onStack: topOf(all, 25),
  };
}
