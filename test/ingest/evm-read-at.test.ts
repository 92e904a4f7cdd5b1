/**
 * The same contract reads at several blocks (`ChainReader.readAt`: a backfill's day-close
 * snapshots) against a small JSON-RPC node over HTTP whose reads answer the block they were
 * made at: with Multicall3, one read alone, then the rest in one JSON-RPC batch; a batch a
 * member's error fails is read block by block, and only that block fails; where no Multicall3
 * answers, each read goes alone.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeFunctionData, encodeAbiParameters, encodeFunctionResult, type Hex } from 'viem';
import { afterEach, describe, expect, it } from 'vitest';
import { multicall3Abi } from '../../ingest/evm/abis.ts';
import { ChainReader, type ReadCall } from '../../ingest/evm/chain.ts';
import { createEvmRpc } from '../../ingest/evm/rpc.ts';

const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';
const word = (n: number) => encodeAbiParameters([{ type: 'uint256' }], [BigInt(n)]);

interface Node {
  url: string;
  server: Server;
  /** Each HTTP request: the blocks of its eth_calls (a batch: several). */
  requests: number[][];
}

/**
 * A node answering eth_call at block B with B + the call's index (through Multicall3's
 * `aggregate3` when `multicall`, else '0x' at its address and the plain call's answer), and a
 * JSON-RPC error for a read at `failing`.
 */
async function startNode(multicall: boolean, failing = -1): Promise<Node> {
  const requests: number[][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const list: { id: number; params: [{ to: string; data: Hex }, Hex] }[] = Array.isArray(body)
        ? body
        : [body];
      requests.push(list.map((r) => Number(r.params[1])));
      const answers = list.map(({ id, params: [tx, tag] }) => {
        const block = Number(tag);
        if (block === failing)
          return { jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } };
        if (tx.to.toLowerCase() !== MULTICALL3.toLowerCase())
          return { jsonrpc: '2.0', id, result: word(block) };
        if (!multicall) return { jsonrpc: '2.0', id, result: '0x' };
        const { args } = decodeFunctionData({ abi: multicall3Abi, data: tx.data });
        const result = encodeFunctionResult({
          abi: multicall3Abi,
          functionName: 'aggregate3',
          result: (args[0] as unknown[]).map((_, k) => ({ success: true, returnData: word(block + k) })),
        });
        return { jsonrpc: '2.0', id, result };
      });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests };
}

let node: Node | undefined;
afterEach(() => node?.server.close());

function reader(url: string): ChainReader {
  return new ChainReader({
    rpc: createEvmRpc({ urls: [url], timeoutMs: 5_000, maxAttempts: 1, backoffMs: 1, maxBackoffMs: 1 }),
    addresses: [],
    topics: [],
    maxBlockRange: 1_000,
    headerBatchSize: 100,
    multicall3: MULTICALL3,
  });
}

const calls: readonly ReadCall[] = Object.freeze([
  { target: '0x00000000000000000000000000000000000000a1', data: '0x18160ddd' },
  { target: '0x00000000000000000000000000000000000000a2', data: '0x18160ddd' },
]);
const blocks = [100, 200, 300, 400, 500];
/** What each block's reads answer: the block, and the block + 1 for the second call. */
const expected = (b: number) => [word(b), word(b + 1)];

describe('reads at several blocks', () => {
  it('sends the first alone, then the rest in one batch, each block its own answers', async () => {
    node = await startNode(true);
    const answers = await Promise.all(reader(node.url).readAt(calls, blocks));
    expect(answers).toEqual(blocks.map(expected));
    expect(node.requests).toEqual([[100], [200, 300, 400, 500]]);
  });

  it("reads a failed batch's blocks one by one: only the failing block fails", async () => {
    node = await startNode(true, 300);
    const r = reader(node.url);
    await r.read(calls, 1); // Multicall3 is known to answer from here on
    const reads = await Promise.allSettled(r.readAt(calls, blocks));
    expect(reads.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    blocks.forEach((b, k) => {
      const s = reads[k];
      if (s.status === 'fulfilled') expect(s.value).toEqual(expected(b));
      else expect(String(s.reason)).toContain('header not found');
    });
    // The batch, then each block alone.
    expect(node.requests.slice(1)).toEqual([blocks, ...blocks.map((b) => [b])]);
  });

  it('reads each call alone where no Multicall3 answers', async () => {
    node = await startNode(false);
    const answers = await Promise.all(reader(node.url).readAt(calls, blocks));
    // A plain read answers its block, whichever call it is.
    expect(answers).toEqual(blocks.map((b) => [word(b), word(b)]));
    // No batch: Multicall3 once (no code), then two plain reads per block.
    expect(node.requests.every((r) => r.length === 1)).toBe(true);
    expect(node.requests).toHaveLength(1 + 2 * blocks.length);
  });
});
