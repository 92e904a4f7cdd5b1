/**
 * Ownership of an embedded data directory. chDB binds one data directory per
 * process, so one process at a time owns `<dataDir>`; others (e.g. `replay` beside a
 * running `start`) only append to its bus log.
 *
 * `<dataDir>/owner.pid` holds the owner's pid and, on Linux, its start time (field 22 of
 * /proc/<pid>/stat, clock ticks since boot): a pid is an owner only while that very process
 * runs. A zombie (killed, not yet reaped by its parent) has released its files and is not an
 * owner; neither is a later process that was given the same pid.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** State and start time of a process from /proc/<pid>/stat; undefined where /proc cannot tell. */
export function procStat(pid: number): { state: string; startTime: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); starttime is field 22.
  return { state: fields[0], startTime: fields[19] };
}

/**
 * Whether a process with this pid runs (EPERM: it does, under another user). A zombie does not;
 * with `startTime` (as recorded by {@link procStat}), a process started at another time (the pid
 * reused) does not either.
 */
export function alive(pid: number, startTime?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = procStat(pid);
  if (!stat) return !existsSync('/proc/self/stat'); // gone meanwhile (false), or no /proc to ask (true)
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return startTime === undefined || stat.startTime === startTime;
}

/**
 * `<dataDir>/<sub>`, a directory of per-process entries named `<pid>-...`: created, and cleared of
 * the entries of processes that are gone, files or directories (the insert spool, the
 * token-holders snapshot files, the analysts' copies of the store).
 */
export function processFilesDir(dataDir: string, sub: string): string {
  const dir = resolve(join(dataDir, sub));
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) {
    const pid = Number(name.split('-')[0]);
    if (!Number.isInteger(pid) || (pid !== process.pid && !alive(pid)))
      rmSync(join(dir, name), { recursive: true, force: true });
  }
  return dir;
}

/** The recorded owner: "<pid> <starttime>", or a bare pid (older files, or no /proc). */
function readOwner(file: string): { pid: number; startTime?: string } | undefined {
  if (!existsSync(file)) return undefined;
  const [pid, startTime] = readFileSync(file, 'utf8').trim().split(/\s+/);
  return { pid: Number(pid), startTime: startTime || undefined };
}

/** The pid owning the directory, if a live process does. */
export function ownerOf(dataDir: string): number | undefined {
  const owner = readOwner(join(dataDir, 'owner.pid'));
  if (!owner) return undefined;
  const { pid, startTime } = owner;
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid, startTime) ? pid : undefined;
}

/** Takes ownership; returns a release function, or undefined when another live process owns it. */
export function acquire(dataDir: string): (() => void) | undefined {
  mkdirSync(dataDir, { recursive: true });
  if (ownerOf(dataDir) !== undefined) return undefined;
  const file = join(dataDir, 'owner.pid');
  const self = procStat(process.pid);
  writeFileSync(file, self ? `${process.pid} ${self.startTime}` : String(process.pid));
  return () => {
    try {
      if (readOwner(file)?.pid === process.pid) rmSync(file);
    } catch {
      /* already gone */
    }
  };
}
