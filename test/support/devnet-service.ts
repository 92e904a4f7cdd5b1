/**
 * `vaultstream start` with the devnet, run as an operator would for end-to-end tests:
 * spawn it on a data directory, wait for its API and `/readyz`, read its API, and wait
 * until ingestion and the consumers have caught up with the chains.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createPublicClient, http, type PublicClient } from 'viem';
import { ROOT } from './cli.ts';

const children: ChildProcess[] = [];

/** Kills (SIGKILL) every service started here that is still running. */
export function killServices(): void {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
}

/** A running `vaultstream start` with its devnet. */
export interface Service {
  child: ChildProcess;
  exited: Promise<number | null>;
  api: string;
  log: { stdout: string; stderr: string };
  rpc: Map<number, PublicClient>;
  truthFile: string;
}

export async function poll<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  svc?: Service,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}; stderr tail: ${svc?.log.stderr.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/**
 * Spawns `vaultstream start` with the devnet on `dataDir`, and waits for /readyz 200.
 * `ownGroup` starts it as the leader of its own process group, as a shell runs a
 * foreground job: `process.kill(-pid, 'SIGINT')` is then a terminal's Ctrl-C.
 */
export async function startService(
  dataDir: string,
  devnet: Record<string, string>,
  opts: { ownGroup?: boolean } = {},
): Promise<Service> {
  const env: Record<string, string> = {
    VAULTSTREAM_DATA_DIR: dataDir,
    API_PORT: '0',
    VAULTSTREAM__sql__http__port: '0',
    LOG_LEVEL: 'info',
  };
  for (const [k, v] of Object.entries({ enabled: 'true', ...devnet })) env[`VAULTSTREAM__devnet__${k}`] = v;
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'vaultstream.mjs'), 'start'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.ownGroup ?? false,
  });
  children.push(child);
  const log = { stdout: '', stderr: '' };
  child.stdout?.on('data', (d) => (log.stdout += d));
  child.stderr?.on('data', (d) => (log.stderr += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const partial = { log } as Service;
  const api = await poll(
    'the API line',
    async () => /vaultstream API (\S+)\/v1/.exec(log.stdout)?.[1],
    120_000,
    partial,
  );
  const running = /"chains":(\[[^\]]*\]),"truthFile":"([^"]+)","msg":"devnet: running"/.exec(log.stderr);
  if (!running) throw new Error('no "devnet: running" log line');
  const rpc = new Map<number, PublicClient>();
  for (const c of JSON.parse(running[1]) as { chainId: number; rpcUrl: string }[])
    rpc.set(c.chainId, createPublicClient({ transport: http(c.rpcUrl) }));
  const svc = { child, exited, api, log, rpc, truthFile: running[2] };
  await poll(
    '/readyz 200',
    async () => ((await fetch(`${api}/readyz`)).status === 200 ? true : undefined),
    90_000,
    svc,
  );
  return svc;
}

/** GET `path` from `on`'s API; the parsed JSON body of a 200, else an error with the status. */
export async function getJson(on: Service, path: string): Promise<any> {
  return (await getOk(on, path)).body;
}

/** GET `path`, required to answer 200: its headers and JSON body. */
async function getOk(on: Service, path: string): Promise<{ headers: Headers; body: any }> {
  const res = await fetch(`${on.api}${path}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 500)}`);
  return { headers: res.headers, body: JSON.parse(text) };
}

/**
 * GET /token-holders once its snapshot is current: the endpoint serves the newest complete
 * snapshot while a newer one builds (stale-while-revalidate, flagged `X-Snapshot-Stale`), and
 * the one built at start can predate the data.
 */
export async function getFreshTokenHolders(on: Service): Promise<any> {
  return poll(
    'a current token-holders snapshot',
    async () => {
      const { headers, body } = await getOk(on, '/v1/token-holders');
      return headers.get('x-snapshot-stale') ? undefined : body;
    },
    30_000,
    on,
  );
}

/**
 * Drained: ingestion live on every chain, every chain's stored watermark at its node's
 * head, no consumer lag, and the raw row counts unchanged since the previous look.
 */
export async function waitDrained(on: Service): Promise<void> {
  let lastRows = '';
  await poll(
    'the consumers to drain',
    async () => {
      const s = await getJson(on, '/status');
      const evm: any[] = s.ingest?.evm ?? [];
      const marks = new Map<number, number>(s.chains.map((c: any) => [c.chainId, c.blockNumber]));
      let atHeads = evm.length === on.rpc.size;
      for (const [chainId, client] of on.rpc)
        atHeads &&= marks.get(chainId) === Number(await client.getBlockNumber());
      const done =
        atHeads &&
        evm.every((p) => p.phase === 'live') &&
        Object.values(s.consumer.lag).every((n) => n === 0);
      const rows = JSON.stringify(s.rows);
      const stable = done && rows === lastRows;
      lastRows = rows;
      return stable ? true : undefined;
    },
    90_000,
    on,
  );
}
