/**
 * core/lock.ts against real processes: a zombie (killed, never reaped by its parent) and a
 * pid whose recorded start time is not the running process's are not owners of a data
 * directory; the process that really holds it is.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { acquire, alive, ownerOf, processFilesDir, procStat } from '../../core/lock.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-lock-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A `sleep` whose parent never reaps it: `sh` execs into another sleep after starting it. */
async function unreapedSleep(): Promise<number> {
  const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(parent);
  let out = '';
  parent.stdout!.on('data', (d) => (out += d));
  return vi.waitFor(() => {
    const pid = Number(out.trim());
    if (!pid) throw new Error('no pid yet');
    return pid;
  });
}

describe('data directory lock', () => {
  it('a zombie owner is not an owner: the directory can be taken right after SIGKILL', async () => {
    const pid = await unreapedSleep();
    const data = join(dir, 'zombie');
    const startTime = procStat(pid)!.startTime;
    acquire(data)!; // a real owner file, then rewritten as the sleep's
    writeFileSync(join(data, 'owner.pid'), `${pid} ${startTime}`);
    expect(ownerOf(data), 'the running sleep owns it').toBe(pid);
    expect(acquire(data)).toBeUndefined();
    process.kill(pid, 'SIGKILL');
    await vi.waitFor(() => expect(procStat(pid)?.state).toBe('Z'));
    expect(alive(pid)).toBe(false);
    expect(ownerOf(data)).toBeUndefined();
    const release = acquire(data);
    expect(release).toBeTypeOf('function');
    expect(readFileSync(join(data, 'owner.pid'), 'utf8')).toBe(
      `${process.pid} ${procStat(process.pid)!.startTime}`,
    );
    release!();
  });

  it('a reused pid is not an owner: the recorded start time must be the running process’s', async () => {
    const pid = await unreapedSleep();
    const data = join(dir, 'reused');
    acquire(data)!;
    const startTime = procStat(pid)!.startTime;
    writeFileSync(join(data, 'owner.pid'), `${pid} ${BigInt(startTime) - 1n}`);
    expect(ownerOf(data)).toBeUndefined();
    expect(acquire(data)).toBeTypeOf('function');
    // A bare pid (an owner file written before start times were recorded) still counts while it runs.
    writeFileSync(join(data, 'owner.pid'), String(pid));
    expect(ownerOf(data)).toBe(pid);
  });

  it("a killed process's per-process files and directories are cleared; a live one's are kept", async () => {
    const live = await unreapedSleep();
    // A pid that has exited: a finished child's.
    const gone = spawn('true');
    await new Promise((r) => gone.once('exit', r));
    const data = join(dir, 'per-process');
    const sub = join(data, 'sql-analysts');
    mkdirSync(join(sub, `${gone.pid}-1`, 'store', 'part'), { recursive: true });
    writeFileSync(join(sub, `${gone.pid}-1`, 'store', 'part', 'data.bin'), 'x');
    writeFileSync(join(sub, `${gone.pid}-2.tsv`), 'x');
    mkdirSync(join(sub, `${live}-1`));
    expect(processFilesDir(data, 'sql-analysts')).toBe(sub);
    expect(existsSync(join(sub, `${gone.pid}-1`))).toBe(false);
    expect(existsSync(join(sub, `${gone.pid}-2.tsv`))).toBe(false);
    expect(existsSync(join(sub, `${live}-1`))).toBe(true);
  });
});
