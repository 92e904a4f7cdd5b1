/**
 * RPC faults on a real anvil behind a small local JSON-RPC proxy that misbehaves on
 * cue: a dead fallback URL, HTTP 429 and 5xx, answers slower than the timeout, and
 * eth_getLogs ranges refused as too large. The ingester must end with exactly the
 * chain's events, every failure published as a `source_errors` event, and a chain
 * that cannot be reached must not hold up another.
 */
import type { Server } from 'node:http';
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { freePort } from '../../devnet/anvil.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { startRpcProxy } from '../support/rpc-proxy.ts';
import {
  addr,
  emitTransfers,
  eventId,
  liveEvents,
  openBus,
  readFamily,
  testConfig,
  untilCaughtUp,
  useEmitterNode,
} from './evm-support.ts';

const proxy = startRpcProxy;

const chain = useEmitterNode('vs-evm-faults-');
const { root } = chain;
let expected: { blockHash: string; logIndex: number; amount: string }[];
/** The chain's head once the fixture events are mined. */
let chainHead = 0;
const servers: Server[] = [];

beforeAll(async () => {
  const { node, emitter } = chain;
  for (let i = 0; i < 6; i++)
    await emitTransfers(node.rpcUrl, emitter, addr(0), addr(0xa11ce), BigInt(10 * i + 1), 2);
  const logs = await createPublicClient({ transport: http(node.rpcUrl) }).getLogs({
    address: emitter,
    fromBlock: 0n,
  });
  expected = logs.map((l) => ({
    blockHash: l.blockHash,
    logIndex: l.logIndex,
    amount: BigInt(l.data).toString(),
  }));
  chainHead = Number(await createPublicClient({ transport: http(node.rpcUrl) }).getBlockNumber());
}, 60_000);
afterAll(() => {
  for (const s of servers) s.close();
});

/** Ingests chain 31337 through `rpcUrls` until caught up; returns the live transfers and the source errors. */
async function ingestThrough(name: string, rpcUrls: string[], over: Record<string, unknown> = {}) {
  const config = testConfig({
    rpcUrls,
    dataDir: join(root, name),
    chain: { requestTimeoutMs: 300, ...over },
    vault: { vaultAddress: chain.emitter },
    ingest: { backoffMs: 5, maxBackoffMs: 40, maxAttempts: 6 },
  });
  const bus = await openBus(join(root, name, 'bus'));
  const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
  const head = Number(await createPublicClient({ transport: http(chain.node.rpcUrl) }).getBlockNumber());
  await untilCaughtUp(ingest, head, 30_000, `${name} to catch up`);
  await ingest.stop();
  const transfers = liveEvents(await readFamily(bus, config.topicPrefix, 'transfers'), eventId);
  const errors = await readFamily(bus, config.topicPrefix, 'source_errors');
  await bus.close();
  return {
    transfers: transfers.map((r) => ({ blockHash: r.blockHash, logIndex: r.logIndex, amount: r.amount })),
    errors,
  };
}

describe('EVM ingest under RPC faults', () => {
  it('moves on to a fallback URL past a dead one and through 429s and 5xx', async () => {
    let calls = 0;
    const flaky = await proxy(chain.node.rpcUrl, () => {
      calls++;
      if (calls % 4 === 1) return { status: 429 };
      if (calls % 4 === 2) return { status: 503 };
      return undefined;
    });
    servers.push(flaky.server);
    const dead = `http://127.0.0.1:${await freePort()}`;
    const { transfers, errors } = await ingestThrough('fallback', [dead, flaky.url]);
    expect(transfers).toEqual(expected);
    const codes = new Set(errors.map((e) => e.code));
    expect(codes).toEqual(new Set(['NETWORK', 'RATE_LIMITED', 'HTTP_ERROR']));
    for (const e of errors) {
      expect(e.vault).toBe('v1');
      expect(e.chainId).toBe(31337);
      expect(e.source).toBe('evm-rpc');
    }
  }, 60_000);

  it('retries a failed round after a backoff (core/retry.ts), not at the next poll', async () => {
    let failing = 4;
    const down = await proxy(chain.node.rpcUrl, () => (failing-- > 0 ? { status: 503 } : undefined));
    servers.push(down.server);
    const config = testConfig({
      rpcUrls: [down.url],
      dataDir: join(root, 'round-backoff'),
      // A minute between polls: a round retried only at the next poll would not catch up in time.
      chain: { pollIntervalMs: 60_000 },
      vault: { vaultAddress: chain.emitter },
      ingest: { backoffMs: 20, maxBackoffMs: 100, maxAttempts: 1 },
    });
    const bus = await openBus(join(root, 'round-backoff', 'bus'));
    const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
    try {
      await untilCaughtUp(ingest, chainHead, 10_000, 'the chain after 4 failed rounds');
      expect(failing).toBeLessThan(0);
    } finally {
      await ingest.stop();
      await bus.close();
    }
  }, 30_000);

  it('retries answers slower than the request timeout', async () => {
    let slow = 3;
    const lagging = await proxy(chain.node.rpcUrl, () => (slow-- > 0 ? { delayMs: 1_000 } : undefined));
    servers.push(lagging.server);
    const { transfers, errors } = await ingestThrough('timeout', [lagging.url]);
    expect(transfers).toEqual(expected);
    expect(errors.filter((e) => e.code === 'TIMEOUT')).toHaveLength(3);
  }, 60_000);

  it('halves eth_getLogs ranges the provider refuses, asking no more than it accepts', async () => {
    const LIMIT = 3;
    const rangeOf = (p: { fromBlock: string; toBlock: string }) =>
      Number(p.toBlock) - Number(p.fromBlock) + 1;
    const strict = await proxy(chain.node.rpcUrl, (body) => {
      const b = body as { method: string; params: { fromBlock: string; toBlock: string }[] };
      if (b.method === 'eth_getLogs' && rangeOf(b.params[0]) > LIMIT)
        return { rpcError: { code: -32602, message: 'block range too large' } };
      return undefined;
    });
    servers.push(strict.server);
    const { transfers, errors } = await ingestThrough('range', [strict.url], { maxBlockRange: 16 });
    expect(transfers).toEqual(expected);
    const asked = strict.seen
      .filter((b) => (b as { method?: string }).method === 'eth_getLogs')
      .map((b) => rangeOf((b as { params: { fromBlock: string; toBlock: string }[] }).params[0]));
    // The first ask covers the chain (up to 16 blocks); each refusal halves it until it fits.
    const refused: number[] = [];
    for (let r = Math.min(16, chainHead + 1); r > LIMIT; r = Math.floor(r / 2)) refused.push(r);
    expect(refused.length).toBeGreaterThan(0);
    expect(asked.slice(0, refused.length)).toEqual(refused);
    expect(Math.max(...asked.slice(refused.length))).toBeLessThanOrEqual(LIMIT);
    expect(errors.filter((e) => e.code === 'RANGE_TOO_LARGE')).toHaveLength(refused.length);
  }, 60_000);

  it('takes the block span a refusal names (reth: "query exceeds max block range N") at once', async () => {
    const LIMIT = 3;
    const rangeOf = (p: { fromBlock: string; toBlock: string }) =>
      Number(p.toBlock) - Number(p.fromBlock) + 1;
    const reth = await proxy(chain.node.rpcUrl, (body) => {
      const b = body as { method: string; params: { fromBlock: string; toBlock: string }[] };
      if (b.method === 'eth_getLogs' && rangeOf(b.params[0]) > LIMIT)
        return { rpcError: { code: -32602, message: `query exceeds max block range ${LIMIT}` } };
      return undefined;
    });
    servers.push(reth.server);
    const { transfers, errors } = await ingestThrough('span', [reth.url], { maxBlockRange: 16 });
    expect(transfers).toEqual(expected);
    const asked = reth.seen
      .filter((b) => (b as { method?: string }).method === 'eth_getLogs')
      .map((b) => rangeOf((b as { params: { fromBlock: string; toBlock: string }[] }).params[0]));
    // One refusal, then never more than the named span (no halving steps).
    expect(asked[0]).toBeGreaterThan(LIMIT);
    expect(Math.max(...asked.slice(1))).toBe(LIMIT);
    expect(errors.filter((e) => e.code === 'RANGE_TOO_LARGE')).toHaveLength(1);
  }, 60_000);

  it('labels -32005 as a rate limit on eth_blockNumber and as a range refusal only on eth_getLogs', async () => {
    let limited = 2;
    const LIMIT = 4;
    const infura = await proxy(chain.node.rpcUrl, (body) => {
      const b = body as { method: string; params: { fromBlock: string; toBlock: string }[] };
      if (b.method === 'eth_blockNumber' && limited-- > 0)
        return { rpcError: { code: -32005, message: 'daily request count exceeded, request rate limited' } };
      if (
        b.method === 'eth_getLogs' &&
        Number(b.params[0].toBlock) - Number(b.params[0].fromBlock) + 1 > LIMIT
      )
        return { rpcError: { code: -32005, message: 'query returned more than 10000 results' } };
      return undefined;
    });
    servers.push(infura.server);
    const { transfers, errors } = await ingestThrough('minus32005', [infura.url], { maxBlockRange: 16 });
    expect(transfers).toEqual(expected);
    const byOperation = (op: string) => [
      ...new Set(errors.filter((e) => e.operation === op).map((e) => e.code)),
    ];
    expect(byOperation('eth_blockNumber')).toEqual(['RATE_LIMITED']);
    expect(errors.filter((e) => e.operation === 'eth_blockNumber')).toHaveLength(2);
    expect(byOperation('eth_getLogs')).toEqual(['RANGE_TOO_LARGE']);
  }, 60_000);

  it("clears the chain's lastError once a round succeeds again", async () => {
    let down = true;
    const outage = await proxy(chain.node.rpcUrl, () => (down ? { status: 503 } : undefined));
    servers.push(outage.server);
    const config = testConfig({
      rpcUrls: [outage.url],
      dataDir: join(root, 'recover'),
      vault: { vaultAddress: chain.emitter },
      ingest: { backoffMs: 5, maxBackoffMs: 20, maxAttempts: 2 },
    });
    const bus = await openBus(join(root, 'recover', 'bus'));
    const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
    await vi.waitFor(() => expect(ingest.progress()[0].phase, 'the outage to show').toBe('failing'), {
      timeout: 10_000,
      interval: 25,
    });
    expect(ingest.progress()[0].lastError).toMatch(/HTTP 503/);
    down = false;
    await untilCaughtUp(ingest, chainHead, 30_000, 'recovery');
    await ingest.stop();
    const p = ingest.progress()[0];
    expect(p.phase).toBe('live');
    expect(p.lastError).toBe('');
    await bus.close();
  }, 60_000);

  it('keeps ingesting one chain while another cannot be reached', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const config = testConfig({
      rpcUrls: [chain.node.rpcUrl],
      dataDir: join(root, 'two'),
      vault: { vaultAddress: chain.emitter, chainIds: [31337, 31338] },
      ingest: { backoffMs: 5, maxBackoffMs: 20, maxAttempts: 2 },
    });
    config.chains.push({ ...config.chains[0], chainId: 31338, name: 'down', rpcUrls: [dead] });
    const bus = await openBus(join(root, 'two', 'bus'));
    const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
    const head = Number(await createPublicClient({ transport: http(chain.node.rpcUrl) }).getBlockNumber());
    await untilCaughtUp(ingest, head, 30_000, 'the live chain');
    await vi.waitFor(() => expect(ingest.progress()[1]?.phase, 'the dead chain to report').toBe('failing'), {
      timeout: 10_000,
      interval: 25,
    });
    await ingest.stop();
    const [live, down] = ingest.progress();
    expect(live.phase).toBe('live');
    expect(down.next).toBe(0);
    expect(down.lastError).toMatch(/cannot reach/);
    const transfers = (await readFamily(bus, config.topicPrefix, 'transfers')).filter(
      (t) => t.chainId === 31337,
    );
    expect(
      transfers.map((r) => ({ blockHash: r.blockHash, logIndex: r.logIndex, amount: r.amount })),
    ).toEqual(expected);
    const errors = await readFamily(bus, config.topicPrefix, 'source_errors');
    expect(errors.length).toBeGreaterThan(0);
    expect(new Set(errors.map((e) => `${e.chainId}:${e.code}`))).toEqual(new Set(['31338:NETWORK']));
    await bus.close();
  }, 60_000);
});
