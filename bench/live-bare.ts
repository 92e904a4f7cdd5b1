/**
 * bench/live.ts' processes: `vaultstream start` / `vaultstream api` on a data directory (own
 * process group, ephemeral ports), the capture of the API's answers to the mix, and the bare
 * `node:http` server that sends those very bytes per path (this file run as a child:
 * `tsx bench/live-bare.ts <mix.json>`, printing `PORT <n>`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
/** Children started as the leaders of their own process group (stopped as a group). */
const GROUPS = new WeakSet<ChildProcess>();
const ROOT = resolve(import.meta.dirname, '..');

/** The API's answers to the mix: per path its headers and body (base64). */
export interface MixBodies {
  paths: string[];
  answers: Record<string, { headers: Record<string, string>; body: string }>;
}

/** Node adds these per connection and response, for the bare server as for the API. */
const PER_RESPONSE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/** GETs every path of the mix from the API (identity encoding, as autocannon asks): 200s required. */
export async function captureMix(base: string, paths: string[]): Promise<MixBodies> {
  const answers: MixBodies['answers'] = {};
  for (const path of paths) {
    const res = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity' } });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${body.toString().slice(0, 300)}`);
    const headers = Object.fromEntries([...res.headers].filter(([k]) => !PER_RESPONSE.has(k)));
    answers[path] = { headers, body: body.toString('base64') };
  }
  return { paths, answers };
}

/** The bare server over `bodies`, in a child process (its own event loop, as the API has). */
export async function startBare(
  bodies: MixBodies,
  dir: string,
): Promise<{ proc: ChildProcess; url: string }> {
  const file = join(dir, 'mix.json');
  writeFileSync(file, JSON.stringify(bodies));
  const proc = spawn(process.execPath, ['--import', 'tsx', SELF, file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((done, fail) => {
    let out = '';
    proc.stdout?.on('data', (d) => {
      out += d;
      const m = /PORT (\d+)/.exec(out);
      if (m) done(Number(m[1]));
    });
    proc.once('exit', (code) => fail(new Error(`the bare server exited ${code}`)));
  });
  return { proc, url: `http://127.0.0.1:${port}` };
}

/** Serves each path's captured headers and body; 404 for any other path. */
function serveBare(file: string): void {
  const { answers } = JSON.parse(readFileSync(file, 'utf8')) as MixBodies;
  const ready = new Map(
    Object.entries(answers).map(([path, a]) => {
      const body = Buffer.from(a.body, 'base64');
      return [path, { body, headers: { ...a.headers, 'content-length': body.length } }];
    }),
  );
  const server = http.createServer((req, res) => {
    const a = ready.get(req.url ?? '');
    if (!a) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, a.headers);
    res.end(a.body);
  });
  server.listen(0, '127.0.0.1', () => console.log(`PORT ${(server.address() as AddressInfo).port}`));
}

/**
 * `vaultstream <role>` on `dataDir` as `npm start` runs it (Node's own young generation, the API's
 * thread its own: api/thread/host.ts; 16 libuv threads unless UV_THREADPOOL_SIZE says otherwise), in its own
 * process group (the devnet's anvil nodes included), API and SQL on ephemeral ports; resolves
 * with its API URL once it is up (`start`: once `/readyz` answers 200).
 */
export async function startVaultstream(
  role: 'start' | 'api',
  dataDir: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  timeoutMs = 600_000,
): Promise<{ proc: ChildProcess; url: string; logged: () => Record<string, number> }> {
  const proc = spawn(process.execPath, [...nodeArgs, join(ROOT, 'bin', 'vaultstream.mjs'), role], {
    cwd: ROOT,
    env: {
      ...process.env,
      UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16',
      VAULTSTREAM_DATA_DIR: dataDir,
      API_PORT: '0',
      VAULTSTREAM__sql__http__port: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  GROUPS.add(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d) => (stdout += d));
  // Warnings and errors the service logged, by message (LOG_LEVEL warn logs nothing else): what
  // explains an error answer the load counted.
  const counts: Record<string, number> = {};
  let partial = '';
  proc.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const { msg, code } = JSON.parse(line) as { msg?: string; code?: string };
        const key = code ? `${msg} (${code})` : String(msg);
        counts[key] = (counts[key] ?? 0) + 1;
      } catch {
        // not a log line
      }
    }
  });
  const logged = () => ({ ...counts });
  const deadline = Date.now() + timeoutMs;
  const fail = (why: string) => {
    killGroup(proc);
    return new Error(`vaultstream ${role}: ${why}; stderr tail: ${stderr.slice(-1500)}`);
  };
  let url: string | undefined;
  while (!url) {
    if (proc.exitCode !== null) throw fail(`exited ${proc.exitCode}`);
    if (Date.now() > deadline) throw fail('no API line in time');
    url = /vaultstream API (\S+)\/v1/.exec(stdout)?.[1];
    if (!url) await sleep(200);
  }
  const probe = role === 'start' ? '/readyz' : '/livez';
  for (;;) {
    if (proc.exitCode !== null) throw fail(`exited ${proc.exitCode}`);
    if (Date.now() > deadline) throw fail(`${probe} not 200 in time`);
    const status = await fetch(`${url}${probe}`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return { proc, url, logged };
    await sleep(300);
  }
}

/** SIGTERM to the process group, SIGKILL after 30 s. */
export async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) {
    killGroup(proc);
    return;
  }
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  try {
    if (proc.pid) process.kill(GROUPS.has(proc) ? -proc.pid : proc.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  const timer = setTimeout(() => killGroup(proc), 30_000);
  await exited;
  clearTimeout(timer);
  killGroup(proc); // anything it left behind
}

function killGroup(proc: ChildProcess): void {
  try {
    if (proc.pid && GROUPS.has(proc)) process.kill(-proc.pid, 'SIGKILL');
    else if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  } catch {
    // already gone
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (process.argv[1] === SELF) serveBare(process.argv[2]);
