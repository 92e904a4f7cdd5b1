/**
 * POST /auto-claim/build-tx answers 503 `{ error, code }` within its
 * budget (`api.buildTx.timeoutMs`) when a chain's RPC never answers or answers too
 * slowly, instead of holding the request through every retry of every URL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, listen } from '../../api/server.ts';
import { parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';

const BUDGET_MS = 1500;
const USER = `0x${'ab'.repeat(20)}`;
const REGISTRY = `0x${'11'.repeat(20)}`;
const OPERATOR = `0x${'22'.repeat(20)}`;

let silent: Server; // accepts every request and never answers
let slow: Server; // answers JSON-RPC, 4 s late
let api: Server;
let store: Store;
let url: string;
let dir: string;
const held: { end(): void }[] = [];
let silentRequests = 0;

const portOf = (s: Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  silent = createServer((_req, res) => {
    silentRequests++;
    held.push(res);
  });
  slow = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const id = (() => {
        try {
          return JSON.parse(body).id ?? 1;
        } catch {
          return 1;
        }
      })();
      const t = setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id, result: `0x${'0'.repeat(64)}` }));
      }, 4000);
      held.push({ end: () => clearTimeout(t) });
    });
  });
  await Promise.all([listen0(silent), listen0(slow)]);
  dir = mkdtempSync(join(tmpdir(), 'vs-buildtx-budget-'));
  const chain = (chainId: number, rpcUrls: string[]) => ({
    chainId,
    name: `c${chainId}`,
    rpcUrls,
    operatorRegistry: REGISTRY,
    redeemOperator: OPERATOR,
    requestTimeoutMs: 10_000,
  });
  const config = parseConfig({
    dataDir: join(dir, 'data'),
    api: { buildTx: { timeoutMs: BUDGET_MS } },
    chains: [
      // Two URLs that never answer: viem's fallback would try each with retries.
      chain(1, [`http://127.0.0.1:${portOf(silent)}/a`, `http://127.0.0.1:${portOf(silent)}/b`]),
      chain(56, [`http://127.0.0.1:${portOf(slow)}`]),
    ],
  });
  store = await createStore(config);
  api = await listen(createApp({ store, config, dataVersion: () => 1, ready: () => true }), '127.0.0.1', 0);
  url = `http://127.0.0.1:${portOf(api)}`;
});

function listen0(s: Server): Promise<void> {
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r()));
}

afterAll(async () => {
  for (const h of held) h.end();
  for (const s of [silent, slow, api]) {
    s?.closeAllConnections();
    await new Promise<void>((r) => (s ? s.close(() => r()) : r()));
  }
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function timedPost(chainId: number) {
  const started = performance.now();
  const res = await fetch(`${url}/v1/auto-claim/build-tx`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chainId, user: USER, enabled: true }),
  });
  const body = (await res.json()) as any;
  return { status: res.status, body, ms: performance.now() - started };
}

describe('build-tx RPC budget', () => {
  it('an RPC that never answers: 503 UPSTREAM_UNAVAILABLE within the budget', async () => {
    const r = await timedPost(1);
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(typeof r.body.error).toBe('string');
    expect(r.ms).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(r.ms).toBeLessThan(BUDGET_MS + 2000);
    expect(silentRequests).toBeGreaterThan(0); // the RPC was really asked
  });

  it('an RPC slower than the budget: 503 within the budget', async () => {
    const r = await timedPost(56);
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(r.ms).toBeLessThan(BUDGET_MS + 2000);
  });

  it('the default budget is 5 s', () => {
    expect(parseConfig({}).api.buildTx.timeoutMs).toBe(5000);
  });
});
