/**
 * The Solana JSON-RPC client on the service's one RPC stack (ingest/solana/rpc.ts over
 * rpc/evm-transport.ts): its faults classified by the shared model, retried through
 * core/retry.ts, and the URL that answered last tried first. Against a real HTTP server on
 * loopback that answers as a Solana node does, or fails on cue.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRpc, faultCode, rpcCodeOf } from '../../ingest/solana/rpc.ts';
import { evmFaultOf } from '../../rpc/rpc-faults.ts';

type Rule = {
  status?: number;
  error?: { code: number; message: string };
  delayMs?: number;
  retryAfter?: string;
};
let server: Server;
let url = '';
let rules: Rule[] = [];
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      hits++;
      const body = JSON.parse(Buffer.concat(chunks).toString());
      const rule = rules.shift() ?? {};
      const send = () => {
        if (rule.status)
          return res
            .writeHead(rule.status, rule.retryAfter ? { 'retry-after': rule.retryAfter } : {})
            .end('busy');
        const answer = rule.error ? { error: rule.error } : { result: 42 };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer }));
      };
      if (rule.delayMs) setTimeout(send, rule.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise((r) => server.close(r));
});

const faults: string[] = [];
const rpc = (urls = [url], maxAttempts = 4) =>
  createRpc({
    urls,
    timeoutMs: 200,
    maxAttempts,
    backoffMs: 1,
    maxBackoffMs: 5,
    onFault: (f) => faults.push(f.fault),
  });

describe('Solana RPC faults, by the shared model', () => {
  it('retries 429 (RATE_LIMITED), 5xx (HTTP_ERROR) and a timeout (TIMEOUT), then answers', async () => {
    faults.length = 0;
    rules = [{ status: 429, retryAfter: '0' }, { status: 503 }, { delayMs: 400 }];
    expect(await rpc().call('getSlot', [])).toBe(42);
    expect(faults).toEqual(['RATE_LIMITED', 'HTTP_ERROR', 'TIMEOUT']);
  });

  it('throws an answered JSON-RPC error at once (RPC_ERROR, the node code kept), not as NOT_FOUND or a timeout', async () => {
    faults.length = 0;
    hits = 0;
    rules = [{ error: { code: -32004, message: 'Block not available for slot 7' } }];
    const err = await rpc()
      .call('getBlock', [7])
      .catch((e: unknown) => e);
    expect(hits).toBe(1);
    expect(evmFaultOf(err)?.fault).toBe('RPC_ERROR');
    expect(evmFaultOf(err)?.errorCode).toBe('RPC_ERROR');
    expect(rpcCodeOf(err)).toBe(-32004);
    expect(faultCode(err)).toBe('RPC_ERROR');
    // An answer, not an outage: no source error for it.
    expect(faults).toEqual([]);
  });

  it('retries -32005 "node is behind" as a rate limit', async () => {
    rules = [{ error: { code: -32005, message: 'Node is behind by 120 slots' } }];
    expect(await rpc().call('getSlot', [])).toBe(42);
  });

  it('gives up after maxAttempts with the last fault (a 5xx stays HTTP_ERROR: RPC_UNAVAILABLE)', async () => {
    rules = [{ status: 502 }, { status: 502 }];
    const err = await rpc([url], 2)
      .call('getSlot', [])
      .catch((e: unknown) => e);
    expect(evmFaultOf(err)?.fault).toBe('HTTP_ERROR');
    expect(evmFaultOf(err)?.errorCode).toBe('RPC_UNAVAILABLE');
  });

  it('moves past a dead URL and then keeps asking the one that answered', async () => {
    const dead = 'http://127.0.0.1:9';
    faults.length = 0;
    hits = 0;
    rules = [];
    const client = rpc([dead, url]);
    expect(await client.call('getSlot', [])).toBe(42);
    expect(await client.call('getSlot', [])).toBe(42);
    expect(await client.call('getSlot', [])).toBe(42);
    expect(faults).toEqual(['NETWORK']);
    expect(hits).toBe(3);
  });
});
