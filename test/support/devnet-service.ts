/**
 * `vaultstream start` with the devnet, run as an operator would for end-to-end tests:
 * spawn it on a data directory, wait for its API and `/readyz`, read its API, and wait
 * until ingestion and the consumers have caught up with the chains.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createPublicClient, http, type PublicClient } from 'viem';
import { expect, vi } from 'vitest';
import { ROOT } from './cli.ts';
import * as T from './devnet-truth.ts';

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

/** The end of the service's stderr, for the message of a wait that timed out. */
export const stderrTail = (svc: Pick<Service, 'log'>): string =>
  `stderr tail: ${svc.log.stderr.slice(-3000)}`;

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
  const api = await vi.waitFor(
    () => {
      const line = /vaultstream API (\S+)\/v1/.exec(log.stdout);
      if (!line) throw new Error(`no API line on stdout yet; ${stderrTail({ log })}`);
      return line[1];
    },
    { timeout: 120_000, interval: 300 },
  );
  const running = /"chains":(\[[^\]]*\]),"truthFile":"([^"]+)","msg":"devnet: running"/.exec(log.stderr);
  if (!running) throw new Error('no "devnet: running" log line');
  const rpc = new Map<number, PublicClient>();
  for (const c of JSON.parse(running[1]) as { chainId: number; rpcUrl: string }[])
    rpc.set(c.chainId, createPublicClient({ transport: http(c.rpcUrl) }));
  const svc = { child, exited, api, log, rpc, truthFile: running[2] };
  await vi.waitFor(
    async () => {
      const status = await fetch(`${api}/readyz`).then(
        (r) => r.status,
        (e: Error) => e.message,
      );
      expect(status, `/readyz; ${stderrTail(svc)}`).toBe(200);
    },
    { timeout: 90_000, interval: 300 },
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
  return vi.waitFor(
    async () => {
      const { headers, body } = await getOk(on, '/v1/token-holders');
      expect(
        headers.get('x-snapshot-stale'),
        `a current token-holders snapshot; ${stderrTail(on)}`,
      ).toBeNull();
      return body;
    },
    { timeout: 30_000, interval: 300 },
  );
}

/**
 * Drained: ingestion live on every chain, every chain's stored watermark at its node's
 * head, no consumer lag, and the raw row counts unchanged since the previous look.
 */
export async function waitDrained(on: Service): Promise<void> {
  let lastRows = '';
  await vi.waitFor(
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
        Object.values(s.consumer.lag).every((n) => n === 0) &&
        // The metrics tables have settled what is stored (views/settle.ts; the vault endpoints read them).
        s.metrics?.settled === true;
      const rows = JSON.stringify(s.rows);
      const stable = rows === lastRows;
      lastRows = rows;
      const phases = evm.map((p) => p.phase);
      expect(
        { atHeads, phases, lag: s.consumer.lag, metrics: s.metrics, stable, done },
        `the consumers to drain; ${stderrTail(on)}`,
      ).toMatchObject({ done: true, stable: true });
    },
    { timeout: 90_000, interval: 300 },
  );
}

/** Every vault's holders (count and top balances, every chain) and TVL as the API serves them equal the ground truth's. */
export async function holdersMatchTruth(svc: Service): Promise<void> {
  const truth = T.readTruth(svc.truthFile);
  const { data } = await getJson(svc, '/v1/vaults/holders?status=all');
  for (const v of T.truthVaults(truth)) {
    const e = data.find((x: { vaultAddress: string }) => T.lc(x.vaultAddress) === v.share);
    expect(e, `vault ${v.slug}`).toBeDefined();
    expect(e.totalHolders, `${v.slug} totalHolders`).toBe(T.holderCount(truth, v));
    T.expectTopHolders(e.holders, T.chainBalances(truth, v), v.slug);
  }
  const details = (await getJson(svc, '/v1/vaults/details?status=all')).data;
  for (const v of T.truthVaults(truth)) {
    const d = details.find((x: { vaultAddress: string }) => T.lc(x.vaultAddress) === v.share);
    T.expectClose(d.tvl, T.units(T.tvlRaw(truth, v), 2 * T.DECIMALS), `${v.slug} tvl`);
  }
}
