/**
 * A chain's request limits (chains[].maxConcurrentRequests, maxRequestsPerSecond) and the calls
 * counted by method, on the one EVM transport (rpc/evm-transport.ts), against a real HTTP
 * JSON-RPC server on loopback that records how many requests it holds at once and when each came;
 * and the retries of requests a provider refuses as over its budget of calls (HTTP 429), against
 * the sparse chain (devnet/sparse-chain.ts `maxCallsPerSecond`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { registry } from '../../core/metrics.ts';
import { startSparseChain } from '../../devnet/sparse-chain.ts';
import { chainTransport, evmTransport } from '../../rpc/evm-transport.ts';

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

const transport = (o: {
  maxConcurrentRequests?: number;
  maxRequestsPerSecond?: number | 'auto';
  chain?: string;
}) =>
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

  it("maxRequestsPerSecond 'auto': no pace for a node on loopback, the public floor for any other host", async () => {
    arrivals.length = 0;
    const local = transport({ maxRequestsPerSecond: 'auto', maxConcurrentRequests: 100 });
    await Promise.all(Array.from({ length: 100 }, () => local.request({ method: 'eth_blockNumber' })));
    // At 25 a second the 100th would start 3.96 s after the first.
    expect(arrivals.at(-1)! - arrivals[0]).toBeLessThan(3_960);
    arrivals.length = 0;
    // The same server under a public name (the requests are sent to it).
    const named = evmTransport({
      urls: ['https://rpc.example.com/'],
      timeoutMs: 5_000,
      maxAttempts: 1,
      backoffMs: 1,
      maxBackoffMs: 1,
      maxRequestsPerSecond: 'auto',
      maxConcurrentRequests: 100,
      fetch: (_u, init) => fetch(url, init),
    })({});
    // Once connected (the first request through fetch is slower to start than the rest).
    await named.request({ method: 'eth_blockNumber' });
    arrivals.length = 0;
    await Promise.all(Array.from({ length: 11 }, () => named.request({ method: 'eth_blockNumber' })));
    // 11 requests 40 ms apart: the last starts at least 400 ms after the first.
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThanOrEqual(380);
  });

  it('by default a chain configured with only its URL is not paced on loopback, and is on a public name', async () => {
    // The user's config: the chains' URLs and nothing else about their limits.
    const cfg = parseConfig({
      devnet: { enabled: false },
      chains: [
        { chainId: 31337, name: 'local', rpcUrls: [url] },
        { chainId: 1, name: 'public', rpcUrls: ['https://rpc.example.com/'] },
      ],
      vaults: [],
    });
    const [local, named] = cfg.chains;
    const burst = async (t: ReturnType<ReturnType<typeof chainTransport>>) => {
      await Promise.all(Array.from({ length: 60 }, () => t.request({ method: 'eth_blockNumber' })));
      return t.value!.limitWaitedMs;
    };
    const onLoopback = await burst(chainTransport(local, cfg.ingest)({}));
    // Held to maxConcurrentRequests only: they waited for a slot, never for a start time.
    expect(onLoopback.paceMs).toBe(0);
    expect(onLoopback.slotMs).toBeGreaterThan(0);
    // The same server under a public name (the requests are sent to it): the public pace binds.
    const onPublic = await burst(
      chainTransport(named, cfg.ingest, { fetch: (_u, init) => fetch(url, init) })({}),
    );
    expect(onPublic.paceMs).toBeGreaterThan(0);
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

  describe("a provider's budget of calls", () => {
    /** `count` headers in batches of 100, sent at once (as the ingester's headersAt), over a throttling chain. */
    const headers = async (callsPerSecond: number, count: number, batchSize = 100) => {
      const chain = await startSparseChain({ blocks: 10_000, events: 10, maxCallsPerSecond: callsPerSecond });
      try {
        const t = evmTransport({
          urls: [chain.url],
          timeoutMs: 5_000,
          maxAttempts: 3,
          backoffMs: 50,
          maxBackoffMs: 200,
        })({});
        const parts = [];
        for (let at = 0; at < count; at += batchSize)
          parts.push(
            Array.from({ length: Math.min(batchSize, count - at) }, (_, k) => ({
              method: 'eth_getBlockByNumber',
              params: [`0x${(at + k).toString(16)}`, false],
            })),
          );
        const answers = (await Promise.all(parts.map((p) => t.value!.batch<{ number: string }>(p)))).flat();
        return {
          numbers: answers.map((h) => Number(h.number)),
          throttled: chain.throttled,
          requests: chain.requests,
        };
      } finally {
        await chain.stop();
      }
    };

    it('reads more than its budget allows at once without running out of attempts', async () => {
      // 1,500 calls at once against 500 a second: two thirds of them wait for the budget to refill,
      // refused meanwhile. With five attempts each (the service's), the batches refused kept
      // being refused until their attempts ran out; a rate limit no longer counts against them.
      const r = await headers(500, 1_500);
      expect(r.numbers).toEqual(Array.from({ length: 1_500 }, (_, k) => k));
      expect(r.throttled).toBeGreaterThan(0);
    }, 30_000);

    it('splits a batch larger than the whole budget of a second', async () => {
      // 100 calls in one batch against 40 a second: never answered whole, so sent in halves (of
      // halves) once refused five times.
      const r = await headers(40, 100);
      expect(r.numbers).toEqual(Array.from({ length: 100 }, (_, k) => k));
      expect(r.requests).toBeGreaterThan(2);
    }, 30_000);
  });
});
