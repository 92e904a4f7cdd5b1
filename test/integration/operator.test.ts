/**
 * What an operator sees when running `vaultstream start` / `ingest`: the real CLI on a
 * small devnet. Not on a terminal: JSON log lines on stderr, with a progress line per
 * chain and the devnet's days. On a terminal (tmux): human-readable log lines and a bar
 * per chain, as the screen shows them. And the warning when nothing is set to ingest.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyEnv } from '../../core/config.ts';
import { ROOT } from '../support/cli.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vs-operator-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Ports of this process's servers: any free one, so runs beside others never collide. */
function freePorts(): Record<string, string> {
  const env: Record<string, string> = { API_PORT: '0' };
  try {
    applyEnv({}, { VAULTSTREAM__sql__http__port: '0' });
    env.VAULTSTREAM__sql__http__port = '0';
  } catch {
    /* no SQL interface in this version */
  }
  return env;
}

const DEVNET = {
  VAULTSTREAM__devnet__enabled: 'true',
  VAULTSTREAM__devnet__backfillDays: '3',
  VAULTSTREAM__devnet__vaults: '1',
  VAULTSTREAM__devnet__chainIds: '[98866,1]',
  VAULTSTREAM__devnet__liveIntervalMs: '0',
};

interface Proc {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  waitFor(re: RegExp, timeoutMs?: number): Promise<void>;
  stop(): Promise<number | null>;
}

function run(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'vaultstream.mjs'), ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', LOG_FORMAT: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async waitFor(re, timeoutMs = 90_000) {
      const missing = () => new Error(`no ${re} on stderr; got:\n${err.slice(-3000)}`);
      // Done early when the child exits: the check after the wait then fails at once.
      await vi.waitFor(
        () => {
          if (child.exitCode === null && !re.test(err)) throw missing();
        },
        { timeout: timeoutMs, interval: 100 },
      );
      if (!re.test(err)) throw missing();
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      return closed;
    },
  };
}

const lines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('vaultstream start, not on a terminal', () => {
  it('logs JSON lines: the devnet backfill by day, then each chain backfilled, and no nothing-to-ingest warning', async () => {
    const p = run(['start'], {
      ...DEVNET,
      ...freePorts(),
      VAULTSTREAM_DATA_DIR: join(dir, 'json'),
      VAULTSTREAM__ingest__progressLogIntervalMs: '200',
    });
    try {
      await p.waitFor(
        /backfill plume: done[^\n]*\n[\s\S]*backfill ethereum: done|backfill ethereum: done[^\n]*\n[\s\S]*backfill plume: done/,
      );
    } finally {
      expect(await p.stop()).toBe(0);
    }
    const logs = lines(p.stderr()); // every line is JSON
    const msgs = logs.map((l) => l.msg);
    expect(msgs).toContain('devnet backfill: day 3/3');
    expect(msgs).toContain('devnet backfill: done, 3 days of history written');
    for (const chain of ['plume', 'ethereum']) {
      const done = logs.find((l) => String(l.msg).startsWith(`backfill ${chain}: done`));
      expect(done, chain).toBeDefined();
      expect(done?.level).toBe(30);
      expect(done?.blocksDone).toBeGreaterThan(0);
      expect(done?.blocksDone).toBe(done?.blocksTotal);
      expect(done?.msg).toBe(
        `backfill ${chain}: done, ${done?.blocksDone}/${done?.blocksTotal} blocks, ${done?.events} events in ${String(done?.msg).match(/in (\d+)s/)?.[1]}s; live`,
      );
      expect(done?.events).toBeGreaterThan(0);
    }
    expect(p.stderr()).not.toContain('nothing to ingest');
  }, 180_000);

  it('a Ctrl-C during start-up (the devnet writing its history) stops cleanly once started: exit 0, nothing killed midway', async () => {
    const p = run(['start'], { ...DEVNET, ...freePorts(), VAULTSTREAM_DATA_DIR: join(dir, 'early-stop') });
    try {
      await p.waitFor(/devnet backfill: day 1\/3/);
    } finally {
      expect(await p.stop()).toBe(0);
    }
    const msgs = lines(p.stderr()).map((l) => l.msg);
    // Node's default handler would have killed it here, before anything below was logged.
    expect(msgs.indexOf('stopping: draining the batch in flight')).toBeLessThan(
      msgs.indexOf('API listening'),
    );
    expect(msgs.at(-1)).toBe('stopped');
  }, 120_000);

  it('warns once when nothing is configured to ingest, saying what to set', async () => {
    const p = run(['ingest'], {
      VAULTSTREAM_DATA_DIR: join(dir, 'nothing'),
      VAULTSTREAM__devnet__enabled: 'false',
    });
    try {
      await p.waitFor(/vault registry published/);
      // With nothing to ingest it still runs until stopped, as every role does.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(p.child.exitCode).toBeNull();
    } finally {
      expect(await p.stop()).toBe(0);
    }
    const warns = lines(p.stderr()).filter((l) => l.level === 40);
    expect(warns.map((w) => w.msg)).toEqual([
      'nothing to ingest: no chain has rpcUrls, the devnet is off and solana.rpcUrls is empty; set chains[].rpcUrls (or solana.rpcUrls) in the config file, or devnet.enabled: true (VAULTSTREAM__devnet__enabled=true) for the local devnet',
    ]);
  }, 120_000);
});

describe("the README's examples on the devnet that `npm start` runs", () => {
  it('every example URL answers 200 and every example slug is a devnet vault', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const urls = [...readme.matchAll(/curl -s '?http:\/\/127\.0\.0\.1:3000(\/[^\s']*)'?/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThanOrEqual(5);
    const slugs = new Set([
      ...[...readme.matchAll(/"vault":"([a-z0-9-]+)"/g)].map((m) => m[1]),
      ...[...readme.matchAll(/\/vaults\/([a-z0-9-]+)\//g)].map((m) => m[1]),
    ]);
    const p = run(['start'], {
      ...DEVNET,
      ...freePorts(),
      LOG_LEVEL: 'warn',
      VAULTSTREAM_DATA_DIR: join(dir, 'readme'),
    });
    try {
      const apiLine = () => p.stdout().match(/vaultstream API (http:\/\/127\.0\.0\.1:\d+)\/v1/)?.[1];
      // Done early when the child exits: the check after the wait then fails at once.
      await vi.waitFor(
        () => {
          if (p.child.exitCode === null && !apiLine()) throw new Error(`no API line; stderr:\n${p.stderr()}`);
        },
        { timeout: 120_000, interval: 100 },
      );
      const base = apiLine();
      if (!base) throw new Error(`no API line; stderr:\n${p.stderr()}`);
      // As the README tells a user: wait for /readyz 200 (every answer then has its data), and
      // until the first vault has a performance history.
      await vi.waitFor(
        async () => {
          expect((await fetch(`${base}/readyz`)).status, '/readyz').toBe(200);
          const r = await fetch(`${base}/v1/vaults/ndev0/performance-history`);
          const body = r.ok ? ((await r.json()) as { data: { history: unknown[] } }) : undefined;
          expect(body?.data.history.length, 'the devnet data: ndev0 performance history').toBeGreaterThan(0);
        },
        { timeout: 120_000, interval: 250 },
      );
      const served = (
        (await (await fetch(`${base}/v1/vaults`)).json()) as { data: { slug: string }[] }
      ).data.map((v) => v.slug);
      for (const slug of slugs) expect(served, `README slug ${slug}`).toContain(slug);
      for (const url of urls) expect((await fetch(`${base}${url}`)).status, url).toBe(200);
    } finally {
      await p.stop();
    }
  }, 240_000);
});

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasTmux)('vaultstream start on a terminal (tmux)', () => {
  const session = `vs-operator-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
  const screen = () => tmux('capture-pane', '-p', '-t', session);
  afterAll(() => {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      /* already gone */
    }
  });

  function waitScreen(test: (s: string) => boolean, timeoutMs = 120_000): Promise<string> {
    return vi.waitFor(
      () => {
        const s = screen();
        if (!test(s)) throw new Error(`screen never matched; it shows:\n${s}`);
        return s;
      },
      { timeout: timeoutMs, interval: 250 },
    );
  }

  it('shows human-readable logs and a bar per chain and for the devnet, then stops on Ctrl-C', async () => {
    const env = { ...DEVNET, ...freePorts(), LOG_LEVEL: 'info', VAULTSTREAM_DATA_DIR: join(dir, 'tty') };
    const assignments = Object.entries(env)
      .map(([k, v]) => `${k}='${v}'`)
      .join(' ');
    tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '200',
      '-y',
      '50',
      `cd '${ROOT}' && env -u LOG_FORMAT ${assignments} '${process.execPath}' bin/vaultstream.mjs start; echo "exit=$?"; sleep 600`,
    );
    const bars = /^plume {8}█{24} (\d+)\/\1 blocks, \d+ events, live$/m;
    // The bars are the last lines (the logs and the API line go above them) once a frame is drawn:
    // a capture can fall between a line written above them and the next frame, 200 ms later.
    const barsLast = (t: string) => /(^|\n)devnet .*\nplume .*\nethereum [^\n]*$/.test(t.trimEnd());
    const s = await waitScreen(
      (t) => bars.test(t) && /^ethereum {5}█{24} (\d+)\/\1 blocks, \d+ events, live$/m.test(t) && barsLast(t),
    );
    expect(s).toMatch(/^devnet {7}█{24} day 3\/3, backfill written, live$/m);
    expect(s).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: API listening \{"url":"http:\/\/127\.0\.0\.1:\d+"\}$/m,
    );
    expect(s).toMatch(/^vaultstream API http:\/\/127\.0\.0\.1:\d+\/v1 {2}docs /m);
    expect(s).not.toContain('{"level"');
    tmux('send-keys', '-t', session, 'C-c');
    const end = await waitScreen((t) => /^exit=\d+$/m.test(t), 60_000);
    expect(end).toMatch(/INFO: stopped$/m);
    expect(end).toMatch(/^exit=0$/m);
  }, 240_000);
});
