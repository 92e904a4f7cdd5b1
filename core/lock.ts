/**
 * Ownership of an embedded data directory. chDB binds one data directory per
 * process, so one process at a time owns `<dataDir>`; others (e.g. `replay` beside a
 * running `start`) only append to its bus log.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * `<dataDir>/<sub>`, a directory of per-process files named `<pid>-...`: created, and cleared of
 * the files of processes that are gone (the insert spool, the token-holders snapshot files).
 */
export function processFilesDir(dataDir: string, sub: string): string {
  const dir = resolve(join(dataDir, sub));
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) {
    const pid = Number(name.split('-')[0]);
    if (!Number.isInteger(pid) || (pid !== process.pid && !alive(pid)))
      rmSync(join(dir, name), { force: true });
  }
  return dir;
}

/** The pid owning the directory, if a live process does. */
export function ownerOf(dataDir: string): number | undefined {
  const file = join(dataDir, 'owner.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : undefined;
}

/** Takes ownership; returns a release function, or undefined when another live process owns it. */
export function acquire(dataDir: string): (() => void) | undefined {
  mkdirSync(dataDir, { recursive: true });
  if (ownerOf(dataDir) !== undefined) return undefined;
  const file = join(dataDir, 'owner.pid');
  writeFileSync(file, String(process.pid));
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file);
    } catch {
      /* already gone */
    }
  };
}
