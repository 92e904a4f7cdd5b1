/**
 * Thread priorities (Linux): the API thread stays at the process's priority while the rest of the
 * process, the pipeline, runs below it (`api.pipelineNice`, docs/architecture.md#the-apis-thread).
 * On Linux a nice value belongs to a thread, not to the process (setpriority(2), "BUGS"), and a
 * thread starts with its creator's: once the main thread is lowered, the threads it starts later
 * (chDB's, a devnet node's restart) are lowered too. Raising a priority back needs a privilege, so
 * nothing here ever raises one.
 */
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The calling thread's kernel id (its TID), or undefined where /proc has none (not Linux). */
export function threadId(): number | undefined {
  try {
    // "<pid>/task/<tid>"
    return Number(readlinkSync('/proc/thread-self').split('/').pop()) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lowers `tid` to `nice`; false when it was not. Never raises a thread, and leaves one raised on
 * purpose (below 0, which takes a privilege: chDB's MemoryWorker raises itself when it can, so
 * that memory accounting keeps up) as it is.
 */
function lower(tid: number, nice: number): boolean {
  try {
    const now = getPriority(tid);
    if (now >= nice || now < 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    // The thread ended meanwhile (ESRCH), or this platform does not allow it: left as it is.
    return false;
  }
}

/**
 * Lowers every thread of this process except `keep` to `nice` (see `lower`). Returns how many
 * threads it lowered; 0 where /proc is missing.
 */
export function lowerThreadsExcept(keep: readonly number[], nice: number): number {
  let tids: number[];
  try {
    tids = readdirSync('/proc/self/task').map(Number);
  } catch {
    return 0;
  }
  let n = 0;
  for (const tid of tids) if (!keep.includes(tid) && lower(tid, nice)) n++;
  return n;
}

/**
 * Lowers a child process that runs in a session of its own (spawned `detached`), with every process
 * of that session: the kernel shares the CPU between sessions first (their autogroups, sched(7)),
 * so the session's nice value is what puts it below this process, whatever its threads' values.
 * False where there is no autogroup scheduling, or it is not allowed. Never raises it.
 */
export function lowerDetachedChild(pid: number, nice: number): boolean {
  try {
    // "/autogroup-<id> nice <n>"
    const now = Number(readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim().split(' ').pop());
    if (now < nice) writeFileSync(`/proc/${pid}/autogroup`, String(nice));
    return true;
  } catch {
    return false;
  }
}
