/**
 * A chain's request limits (chains[].maxConcurrentRequests, maxRequestsPerSecond) and the calls
 * counted by method, on the one EVM transport (core/evm-transport.ts), against a real HTTP
 * JSON-RPC server on loopback that records how many requests it holds at once and when each came.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmTransport } from '../../core/evm-transport.ts';
import { registry } from '../../core/metrics.ts';

let server: Server;
let url = '';
let inFlight = 0;
let most = 0;
const arrivals: number[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      arrivals.push(performance.now());
      inFlight++;
      most = Math.max(most, inFlight);
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const one = (r: { id: number }) => ({ jsonrpc: '2.0', id: r.id, result: '0x1' });
      setTimeout(() => {
        inFlight--;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(Array.isArray(body) ? body.map(one) : one(body)));
      }, 40);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

const transport = (o: { maxConcurrentRequests?: number; maxRequestsPerSecond?: number; chain?: string }) =>
  evmTransport({ urls: [url], timeoutMs: 5_000, maxAttempts: 1, backoffMs: 1, maxBackoffMs: 1, ...o })({});

describe('per-chain request limits', () => {
  it('holds at most maxConcurrentRequests requests in flight', async () => {
    most = 0;
    const t = transport({ maxConcurrentRequests: 2 });
    await Promise.all(Array.from({ length: 12 }, () => t.request({ method: 'eth_blockNumber' })));
    expect(most).toBe(2);
    most = 0;
    const free = transport({});
    await Promise.all(Array.from({ length: 12 }, () => free.request({ method: 'eth_blockNumber' })));
    expect(most).toBeGreaterThan(2);
  });

  it('starts at most maxRequestsPerSecond requests a second', async () => {
    arrivals.length = 0;
    const t = transport({ maxRequestsPerSecond: 20, maxConcurrentRequests: 100 });
    await Promise.all(Array.from({ length: 11 }, () => t.request({ method: 'eth_blockNumber' })));
    // 11 requests 50 ms apart: the last starts at least 500 ms after the first.
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThanOrEqual(480);
  });

  it('counts the calls by method, each item of a batch, in the transport and in /metrics', async () => {
    const t = transport({ chain: 'counted' });
    await t.request({ method: 'eth_blockNumber' });
    await t.value?.batch(
      Array.from({ length: 3 }, () => ({ method: 'eth_getBlockByNumber', params: ['0x1', false] })),
    );
    expect(Object.fromEntries(t.value?.calls ?? [])).toEqual({ eth_blockNumber: 1, eth_getBlockByNumber: 3 });
    const text = await registry.getSingleMetricAsString('vaultstream_rpc_calls_total');
    expect(text).toContain('vaultstream_rpc_calls_total{chain="counted",method="eth_getBlockByNumber"} 3');
    expect(text).toContain('vaultstream_rpc_calls_total{chain="counted",method="eth_blockNumber"} 1');
  });
});
