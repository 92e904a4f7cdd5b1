/**
 * `vaultstream start` (what `npm start` runs) on a fresh data directory: every role in
 * one process; the registry flows through the bus into the views; the operations
 * endpoints answer; SIGTERM drains and exits cleanly, releasing the data directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ROOT } from '../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-start-'));
let child: ChildProcess | undefined;
const others: ChildProcess[] = [];
afterAll(() => {
  child?.kill('SIGKILL');
  for (const c of others) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const ENV = {
  API_PORT: '0',
  VAULTSTREAM__sql__http__port: '0',
  LOG_LEVEL: 'info',
  // The configured registry only: the devnet run is test/e2e/devnet.test.ts.
  VAULTSTREAM__devnet__enabled: 'false',
};

/**
 * A clean shutdown logs nothing at warn or above (but the "nothing to ingest" notice of a
 * run without chains) and leaves none of its temporary files in the data directory.
 */
function expectCleanShutdown(log: string, data: string) {
  const warned = log.split('\n').filter((l) => /"level":([4-9]\d)/.test(l) && !/nothing to ingest/.test(l));
  expect(warned).toEqual([]);
  expect(readdirSync(join(data, 'snapshots'))).toEqual([]);
}

/** The API's address, once the process has logged it on stderr. */
function apiUrl(log: () => string): Promise<string> {
  return vi.waitFor(
    () => {
      const m = /"url":"(http:\/\/[^"]+)"/.exec(log());
      if (!m) throw new Error(`no API url on stderr yet: ${log().slice(-3000)}`);
      return m[1];
    },
    { timeout: 30_000, interval: 100 },
  );
}

/**
 * `/readyz` once it answers 200. Ready comes a probe or two after the API listens: once the rest
 * is ready, the token-holders snapshot is built again from the data stored by then
 * (api/snapshot-readiness.ts).
 */
function untilReady(url: string): Promise<any> {
  return vi.waitFor(
    async () => {
      const res = await fetch(`${url}/readyz`);
      const body = await res.json();
      expect(res.status, JSON.stringify(body.reasons)).toBe(200);
      return body;
    },
    { timeout: 30_000, interval: 200 },
  );
}

describe('vaultstream start (embedded)', () => {
  it('serves /livez, /readyz, /metrics and /status with the registry stored, then drains on SIGTERM', async () => {
    child = spawn(process.execPath, [join(ROOT, 'bin', 'vaultstream.mjs'), 'start'], {
      cwd: ROOT,
      env: { ...process.env, ...ENV, VAULTSTREAM_DATA_DIR: join(dir, 'data') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stderr!.on('data', (d) => (log += d));
    const url = await apiUrl(() => log);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
    expect(await untilReady(url)).toMatchObject({ status: 'ready', reasons: [] });
    const status = await vi.waitFor(
      async () => {
        const s = await (await fetch(`${url}/status`)).json();
        expect(s.rows.registry_raw, 'the registry stored').toBe(3);
        return s;
      },
      { timeout: 30_000, interval: 200 },
    );
    expect(status.store).toMatchObject({ kind: 'chdb', database: 'vaultstream' });
    // Every migration file of the repository, applied once each, in order.
    const files = readdirSync(join(ROOT, 'views', 'migrations')).filter((f) => f.endsWith('.sql'));
    expect(files.length).toBeGreaterThanOrEqual(4);
    expect(status.store.migrations).toEqual(files.sort());
    expect(status.consumer.lag['vaultstream.registry']).toBe(0);
    // The in-process log's offsets are byte positions: its lag is in bytes, and says so.
    expect(status.consumer.lagUnit).toBe('bytes');
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(
      /vaultstream_consumer_lag_bytes\{topic="vaultstream.registry",partition="\d+"\} 0/,
    );
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/vaultstream_rows_inserted_total\{table="registry_raw"\} 3/);
    // The API's thread and the main thread both time their event loops: one family, both series.
    expect(metrics.match(/^# TYPE vaultstream_event_loop_delay_seconds /gm)).toHaveLength(1);
    expect(metrics).toMatch(/^vaultstream_event_loop_delay_seconds_count \d+$/m);
    expect(metrics).toMatch(/^vaultstream_event_loop_delay_seconds_count\{thread="api"\} \d+$/m);
    const doc = await (await fetch(`${url}/v1/openapi.json`)).json();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.paths)).toContain('/vaults/{slug}/performance-history');
    const docs = await fetch(`${url}/docs`);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    const missing = await fetch(`${url}/v1/no-such-route`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND' });
    expect(existsSync(join(dir, 'data', 'owner.pid'))).toBe(true);
    const exited = new Promise<number | null>((r) => child!.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(log).toMatch(/"msg":"stopped"/);
    expect(existsSync(join(dir, 'data', 'owner.pid'))).toBe(false);
    expectCleanShutdown(log, join(dir, 'data'));
  });

  it('Ctrl-C on npm start (the signal twice at once: from the terminal, then forwarded by npm) still drains cleanly', async () => {
    const data = join(dir, 'twice');
    const proc = spawn(process.execPath, [join(ROOT, 'bin', 'vaultstream.mjs'), 'start'], {
      cwd: ROOT,
      env: { ...process.env, ...ENV, VAULTSTREAM_DATA_DIR: data },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    others.push(proc);
    let log = '';
    proc.stderr!.on('data', (d) => (log += d));
    const url = await apiUrl(() => log);
    await untilReady(url);
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    proc.kill('SIGINT');
    // npm's copy arrives once this process has taken the terminal's (two signals sent at once
    // are one pending signal to the kernel).
    await vi.waitFor(() => expect(log).toMatch(/"msg":"stopping/), { timeout: 5_000, interval: 5 });
    proc.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(log).toMatch(/"msg":"stopped"/);
    expectCleanShutdown(log, data);
  });

  it('restarts right after a SIGKILL: the killed owner, still a zombie, does not hold the data directory', async () => {
    const data = join(dir, 'killed');
    // The shell starts vaultstream and then becomes a sleep that never reaps it, so the
    // SIGKILLed process stays a zombie (as it does while a slow parent has not waited for it).
    const parent = spawn('sh', ['-c', `"${process.execPath}" bin/vaultstream.mjs start & exec sleep 120`], {
      cwd: ROOT,
      env: { ...process.env, ...ENV, VAULTSTREAM_DATA_DIR: data },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    others.push(parent);
    let first = '';
    parent.stderr!.on('data', (d) => (first += d));
    await apiUrl(() => first);
    const pid = Number(readFileSync(join(data, 'owner.pid'), 'utf8').split(' ')[0]);
    process.kill(pid, 'SIGKILL');
    await vi.waitFor(() => expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toMatch(/\) Z /));
    const second = spawn(process.execPath, [join(ROOT, 'bin', 'vaultstream.mjs'), 'start'], {
      cwd: ROOT,
      env: { ...process.env, ...ENV, VAULTSTREAM_DATA_DIR: data },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    others.push(second);
    let log = '';
    second.stderr!.on('data', (d) => (log += d));
    second.on('exit', (code) => (log += `\nexited ${code}`));
    const url = await apiUrl(() => log);
    expect(await untilReady(url)).toMatchObject({ status: 'ready' });
    expect(readFileSync(join(data, 'owner.pid'), 'utf8').split(' ')[0]).toBe(String(second.pid));
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8'), 'the first is still a zombie').toMatch(/\) Z /);
    // Stopped at once, while the first token-holders snapshot may still be building.
    const exited = new Promise<number | null>((r) => second.on('exit', (code) => r(code)));
    second.kill('SIGTERM');
    expect(await exited).toBe(0);
    expectCleanShutdown(log, data);
  });
});
