/**
 * rpc/evm-transport.ts against a real anvil, behind a small local JSON-RPC proxy that
 * fails in chosen ways: a dead first URL, HTTP 429 with Retry-After, -32005 on eth_getLogs
 * (a range refusal, never retried) and elsewhere (a rate limit, retried), answers slower than
 * the timeout, permanent JSON-RPC errors, and a signal that ends the retries. The answers
 * through the transport must equal anvil's own, and each failure must surface as viem's
 * error type carrying the fault kind and the project's code.
 */
import type { Server } from 'node:http';
import {
  BaseError,
  createPublicClient,
  type Hex,
  HttpRequestError,
  http,
  InvalidParamsRpcError,
  LimitExceededRpcError,
  numberToHex,
  RpcRequestError,
  TimeoutError,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../devnet/anvil.ts';
import { type EvmTransportOptions, evmTransport } from '../../rpc/evm-transport.ts';
import { type EvmFault, evmFaultOf } from '../../rpc/rpc-faults.ts';
import { type RpcBody, type Rule, startRpcProxy } from '../support/rpc-proxy.ts';
import { addr, emitTransfers, useEmitterNode } from './evm-support.ts';

type Body = RpcBody;

/** The proxy (test/support/rpc-proxy.ts), closed after the suite. */
async function proxy(target: string, rule: Rule): Promise<{ url: string; seen: Body[] }> {
  const p = await startRpcProxy(target, rule);
  servers.push(p.server);
  return p;
}

const chain = useEmitterNode('vs-evm-transport-');
const servers: Server[] = [];
let head = 0;

beforeAll(async () => {
  for (let i = 0; i < 4; i++)
    await emitTransfers(chain.node.rpcUrl, chain.emitter, addr(0), addr(0xa11ce), BigInt(i + 1), 3);
  head = Number(await direct().getBlockNumber());
}, 60_000);

afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

const direct = () => createPublicClient({ transport: http(chain.node.rpcUrl) });

/** A transport over `urls` with fast retries; every failed attempt is collected in `faults`. */
function transport(urls: string[], over: Partial<EvmTransportOptions> = {}) {
  const faults: { fault: EvmFault; url: string; method: string }[] = [];
  const t = evmTransport({
    urls,
    timeoutMs: 2_000,
    maxAttempts: 4,
    backoffMs: 5,
    maxBackoffMs: 20,
    jitter: 0.5,
    onFault: (fault, url, method) => faults.push({ fault, url, method }),
    ...over,
  });
  const built = t({});
  return { t, request: built.request, value: built.value as NonNullable<typeof built.value>, faults };
}

const methodsOf = (seen: Body[]) => seen.map((b) => (Array.isArray(b) ? `batch:${b[0].method}` : b.method));
const logsAsk = (from: number, to: number) => [{ fromBlock: numberToHex(from), toBlock: numberToHex(to) }];

describe('the EVM transport', () => {
  it('moves past a dead first URL and then keeps using the one that answered', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const good = await proxy(chain.node.rpcUrl, () => undefined);
    const { t, faults } = transport([dead, good.url]);
    const client = createPublicClient({ transport: t });
    expect(Number(await client.getBlockNumber({ cacheTime: 0 }))).toBe(head);
    expect(faults.map((f) => [f.fault.fault, f.fault.errorCode, f.url])).toEqual([
      ['NETWORK', 'RPC_UNAVAILABLE', dead],
    ]);
    expect(faults[0].fault).toBeInstanceOf(HttpRequestError);
    expect(faults[0].fault.cause).toBeInstanceOf(Error); // fetch's own failure
    // The next requests go to the URL that answered: no new fault.
    const block = await client.getBlock({ blockNumber: BigInt(head) });
    expect(block.hash).toBe((await direct().getBlock({ blockNumber: BigInt(head) })).hash);
    expect(faults).toHaveLength(1);
    expect(methodsOf(good.seen)).toEqual(['eth_blockNumber', 'eth_getBlockByNumber']);
  });

  it('retries HTTP 429 and 503, then answers what anvil answers', async () => {
    let n = 0;
    const flaky = await proxy(chain.node.rpcUrl, () => {
      n++;
      if (n === 1) return { status: 429, headers: { 'retry-after': '0' } };
      if (n === 2) return { status: 503 };
      return undefined;
    });
    const { request, faults } = transport([flaky.url]);
    const logs = await request({ method: 'eth_getLogs', params: logsAsk(0, head) });
    expect(logs).toEqual(
      await direct().request({ method: 'eth_getLogs', params: logsAsk(0, head) as never }),
    );
    expect((logs as unknown[]).length).toBe(12);
    expect(faults.map((f) => [f.fault.fault, f.fault.errorCode])).toEqual([
      ['RATE_LIMITED', 'RPC_RATE_LIMITED'],
      ['HTTP_ERROR', 'RPC_UNAVAILABLE'],
    ]);
    expect((faults[1].fault as unknown as HttpRequestError).status).toBe(503);
    expect(faults[1].fault.message).toMatch(/HTTP 503/);
  });

  it('hands back -32005 on eth_getLogs at once as a range refusal, and retries it elsewhere as a rate limit', async () => {
    let limited = 2;
    const infura = await proxy(chain.node.rpcUrl, (b) => {
      const m = (b as { method: string }).method;
      if (m === 'eth_getLogs')
        return { rpcError: { code: -32005, message: 'query returned more than 10000 results' } };
      if (m === 'eth_blockNumber' && limited-- > 0)
        return { rpcError: { code: -32005, message: 'daily request count exceeded, request rate limited' } };
      return undefined;
    });
    const { request, faults } = transport([infura.url]);
    const err = await request({ method: 'eth_getLogs', params: logsAsk(0, head) }).catch((e: unknown) => e);
    // viem maps the code to its own type; the transport's error is its cause.
    expect(err).toBeInstanceOf(LimitExceededRpcError);
    const fault = evmFaultOf(err);
    expect(fault).toBeInstanceOf(RpcRequestError);
    expect(fault?.fault).toBe('RANGE_TOO_LARGE');
    expect(fault?.errorCode).toBe('RPC_RANGE_TOO_LARGE');
    expect(fault?.retryable).toBe(false);
    expect(methodsOf(infura.seen)).toEqual(['eth_getLogs']); // not retried

    expect(Number(await request({ method: 'eth_blockNumber' }))).toBe(head);
    expect(faults.map((f) => `${f.method}:${f.fault.fault}`)).toEqual([
      'eth_getLogs:RANGE_TOO_LARGE',
      'eth_blockNumber:RATE_LIMITED',
      'eth_blockNumber:RATE_LIMITED',
    ]);
  });

  it('retries answers slower than the timeout, and ends in a TimeoutError when none is fast enough', async () => {
    let slow = 2;
    const lagging = await proxy(chain.node.rpcUrl, () => (slow-- > 0 ? { delayMs: 600 } : undefined));
    const { request, faults } = transport([lagging.url], { timeoutMs: 200 });
    expect(Number(await request({ method: 'eth_blockNumber' }))).toBe(head);
    expect(faults.map((f) => f.fault.fault)).toEqual(['TIMEOUT', 'TIMEOUT']);
    expect(faults[0].fault).toBeInstanceOf(TimeoutError);

    const stuck = await proxy(chain.node.rpcUrl, () => ({ delayMs: 600 }));
    const t2 = transport([stuck.url], { timeoutMs: 100, maxAttempts: 2 });
    const err = await t2.request({ method: 'eth_chainId' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(evmFaultOf(err)?.errorCode).toBe('TIMEOUT');
    expect(t2.faults).toHaveLength(2);
  });

  it('throws a permanent JSON-RPC error at once, as viem types it', async () => {
    const strict = await proxy(chain.node.rpcUrl, () => ({
      rpcError: { code: -32602, message: 'invalid params' },
    }));
    const client = createPublicClient({ transport: transport([strict.url]).t });
    const err = await client.getBlockNumber({ cacheTime: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BaseError);
    expect((err as BaseError).walk((e) => e instanceof InvalidParamsRpcError)).toBeInstanceOf(
      InvalidParamsRpcError,
    );
    expect(evmFaultOf(err)?.fault).toBe('RPC_ERROR');
    expect(evmFaultOf(err)?.errorCode).toBe('RPC_ERROR');
    expect(strict.seen).toHaveLength(1);
  });

  it('answers a JSON-RPC batch in call order, retried as one', async () => {
    let n = 0;
    const flaky = await proxy(chain.node.rpcUrl, () => (n++ === 0 ? { status: 502 } : undefined));
    const { value, faults } = transport([flaky.url]);
    const numbers = Array.from({ length: head + 1 }, (_, i) => i).reverse();
    const blocks = await value.batch<{ number: Hex; hash: Hex }>(
      numbers.map((i) => ({ method: 'eth_getBlockByNumber', params: [numberToHex(i), false] })),
    );
    expect(blocks.map((b) => Number(b.number))).toEqual(numbers);
    const want = await direct().getBlock({ blockNumber: BigInt(head) });
    expect(blocks[0].hash).toBe(want.hash);
    expect(faults.map((f) => f.method)).toEqual(['batch:eth_getBlockByNumber']);
    expect(methodsOf(flaky.seen)).toEqual(['batch:eth_getBlockByNumber', 'batch:eth_getBlockByNumber']);
    expect(value.waitedMs).toBeGreaterThan(0);
  });

  it('retries only the members of a batch the provider failed or left out', async () => {
    let n = 0;
    // The first answer: members 1 and 3 rate limited (-32005), member 5 missing; then all forwarded.
    const partial = await proxy(chain.node.rpcUrl, () =>
      n++ === 0
        ? {
            rewrite: (answer) =>
              (answer as { id: number; result?: unknown; error?: unknown }[])
                .map((a, k) =>
                  k === 1 || k === 3
                    ? { jsonrpc: '2.0', id: a.id, error: { code: -32005, message: 'limit exceeded' } }
                    : a,
                )
                .filter((_, k) => k !== 5),
          }
        : undefined,
    );
    const { value, faults } = transport([partial.url]);
    const numbers = Array.from({ length: head + 1 }, (_, i) => i);
    const asks = numbers.map((i) => ({ method: 'eth_getBlockByNumber', params: [numberToHex(i), false] }));
    const blocks = await value.batch<{ number: Hex; hash: Hex }>(asks);
    expect(blocks.map((b) => Number(b.number))).toEqual(numbers);
    for (const i of [1, 3, 5])
      expect(blocks[i].hash).toBe((await direct().getBlock({ blockNumber: BigInt(i) })).hash);
    // The retry is a batch of the three owed members, nothing else.
    expect(partial.seen).toHaveLength(2);
    expect((partial.seen[1] as { params: unknown[] }[]).map((c) => Number(c.params[0]))).toEqual([1, 3, 5]);
    expect(faults.map((f) => f.fault.fault)).toEqual(['RATE_LIMITED']);
    expect(value.calls.get('eth_getBlockByNumber')).toBe(numbers.length + 3);
    expect(value.requests).toBe(2);
  });

  it("fails a batch at once on a member's permanent error", async () => {
    const strict = await proxy(chain.node.rpcUrl, () => ({
      rewrite: (answer) =>
        (answer as { id: number }[]).map((a, k) =>
          k === 2 ? { jsonrpc: '2.0', id: a.id, error: { code: -32602, message: 'invalid params' } } : a,
        ),
    }));
    const { value } = transport([strict.url]);
    const err = await value
      .batch([0, 1, 2].map((i) => ({ method: 'eth_getBlockByNumber', params: [numberToHex(i), false] })))
      .catch((e: unknown) => e);
    expect(evmFaultOf(err)?.fault).toBe('RPC_ERROR');
    expect(strict.seen).toHaveLength(1);
  });

  for (const refusal of ['an error object', 'HTTP 405'] as const)
    it(`sends single calls to a provider that refuses batches (${refusal})`, async () => {
      const single = await proxy(chain.node.rpcUrl, (body) => {
        if (!Array.isArray(body)) return undefined;
        return refusal === 'HTTP 405'
          ? { status: 405 }
          : {
              json: {
                jsonrpc: '2.0',
                id: null,
                error: { code: -32600, message: 'batch requests are not supported' },
              },
            };
      });
      const { value } = transport([single.url]);
      const asks = (from: number) =>
        [from, from + 1, from + 2].map((i) => ({
          method: 'eth_getBlockByNumber',
          params: [numberToHex(i), false],
        }));
      const first = await value.batch<{ number: Hex }>(asks(0));
      expect(first.map((b) => Number(b.number))).toEqual([0, 1, 2]);
      // One refused batch, then single calls; a later batch goes as single calls at once.
      expect(methodsOf(single.seen)).toEqual([
        'batch:eth_getBlockByNumber',
        ...Array(3).fill('eth_getBlockByNumber'),
      ]);
      const second = await value.batch<{ number: Hex }>(asks(1));
      expect(second.map((b) => Number(b.number))).toEqual([1, 2, 3]);
      expect(single.seen).toHaveLength(7);
      expect(value.requests).toBe(7);
    });

  it('halves a batch answered HTTP 413 (too large) until it is taken, and sends no larger one again', async () => {
    // A provider that takes batches of at most 4 members.
    const capped = await proxy(chain.node.rpcUrl, (body) =>
      Array.isArray(body) && body.length > 4 ? { status: 413 } : undefined,
    );
    const { value, faults } = transport([capped.url]);
    const numbers = Array.from({ length: 10 }, (_, i) => i % (head + 1));
    const asks = numbers.map((i) => ({ method: 'eth_getBlockByNumber', params: [numberToHex(i), false] }));
    const blocks = await value.batch<{ number: Hex; hash: Hex }>(asks);
    expect(blocks.map((b) => Number(b.number))).toEqual(numbers);
    expect(blocks[9].hash).toBe((await direct().getBlock({ blockNumber: BigInt(numbers[9]) })).hash);
    const sizes = () => capped.seen.map((b) => (Array.isArray(b) ? b.length : 'single'));
    // 10 refused, its halves of 5 refused, their halves taken: batches still, never single calls.
    expect(sizes().slice(0, 3)).toEqual([10, 5, 5]);
    expect(sizes().slice(3).sort()).toEqual([2, 2, 3, 3]);
    expect(faults.map((f) => f.fault.fault)).toEqual(Array(3).fill('RANGE_TOO_LARGE'));
    // A later batch is cut to the size taken at once: no 413 again.
    const again = await value.batch<{ number: Hex }>(asks);
    expect(again.map((b) => Number(b.number))).toEqual(numbers);
    expect(sizes().slice(7)).toEqual([3, 3, 3, 1]);
    expect(faults).toHaveLength(3);
  });

  it('stops retrying once its signal fires', async () => {
    const ctl = new AbortController();
    const down = await proxy(chain.node.rpcUrl, () => ({ status: 503 }));
    const { request, faults } = transport([down.url], {
      maxAttempts: 20,
      backoffMs: 50,
      maxBackoffMs: 50,
      signal: ctl.signal,
      onFault: () => {
        if (down.seen.length === 2) ctl.abort();
      },
    });
    const err = await request({ method: 'eth_blockNumber' }).catch((e: unknown) => e);
    expect(down.seen).toHaveLength(2);
    expect(faults).toHaveLength(0); // replaced by the hook above
    // viem wraps the helper's abort error; the last transport fault is in its cause chain.
    expect(err).toBeInstanceOf(BaseError);
    expect(evmFaultOf(err)?.fault).toBe('HTTP_ERROR');
  });
});
