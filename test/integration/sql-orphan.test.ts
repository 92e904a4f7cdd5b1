/**
 * The analysts' process (api/sql/analysts-main.ts) does not outlive the service: SIGKILLed, the
 * service cannot stop it, and a process left behind would hold its memory, its copy of the data
 * and the service's stdout and stderr (so a supervisor reading them never sees the service end).
 * Killed with queries running on the analysts' lanes, the moment an exit that tears the lanes down
 * makes the engine's addon abort.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ROOT } from '../support/cli.ts';

const dirs: string[] = [];
const left: number[] = [];
afterAll(() => {
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true, maxRetries: 20 });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The interface in a child process; resolves with it, its url and the analysts' pid. */
async function startChild(): Promise<{
  child: ChildProcess;
  url: string;
  pid: number;
  closed: Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'vs-sql-orphan-'));
  dirs.push(dir);
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/sql-server-child.ts', dir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const closed = new Promise<void>((done) => child.on('close', () => done()));
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => (err += d));
  const first = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
    });
    child.on('exit', (code) => reject(new Error(`the child exited (${code}): ${err.slice(-1500)}`)));
  });
  const { url, pid } = JSON.parse(first) as { url: string; pid: number };
  left.push(pid);
  return { child, url, pid, closed };
}

describe("the analysts' process ends with the service", () => {
  it('SIGKILLed with queries running on every lane, the service leaves no process and no open output behind', async () => {
    for (let round = 0; round < 3; round++) {
      const { child, url, pid, closed } = await startChild();
      expect(alive(pid)).toBe(true);
      // Queries that run seconds, on the lanes (sql.http.maxConcurrentQueries) and queued behind them.
      const heavy = 'SELECT sum(cityHash64(number)) FROM numbers(3000000000)';
      const running = Array.from({ length: 6 }, () =>
        fetch(`${url}/?query=${encodeURIComponent(heavy)}`).then(
          (r) => r.status,
          () => 'gone',
        ),
      );
      await new Promise((r) => setTimeout(r, 300 + round * 400));
      child.kill('SIGKILL');
      await vi.waitFor(() => expect(alive(pid), `analysts' process ${pid} still runs`).toBe(false), {
        timeout: 20_000,
        interval: 100,
      });
      // Its stdout and stderr, which the analysts' process shared, close too.
      await closed;
      // Every request is answered or cut, none left hanging.
      for (const r of await Promise.all(running)) expect([200, 'gone', 500, 503]).toContain(r);
    }
  }, 120_000);
});
