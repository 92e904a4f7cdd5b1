/**
 * A kill in the middle of a backfill: the ingester runs in a child process that is
 * SIGKILLed once it has checkpointed part of the chain, then a new one resumes from
 * the checkpoint. Every block and event of the chain must be on the bus (no gap), and
 * anything published twice (the range in flight at the kill) must be the identical
 * event, which the consumers drop.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, type Hex, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InProcessBus } from '../../bus/inprocess.ts';
import { type AnvilNode, startAnvil } from '../../devnet/anvil.ts';
import { addr, anvilRpc, deployEmitter, emitTransfers, liveEvents, readFamily } from './evm-support.ts';

let node: AnvilNode;
let emitter: Hex;
/**
 * A JSON-RPC proxy that answers 20 ms late: the first ingester reads through it, so the kill
 * lands mid-backfill however fast the ingester is (unthrottled, it can finish the whole chain
 * before the test sees its first checkpoint).
 */
let slow: Server;
let slowUrl = '';
const root = mkdtempSync(join(tmpdir(), 'vs-evm-restart-'));
const children: ChildProcess[] = [];

beforeAll(async () => {
  node = await startAnvil({ chainId: 31337 });
  emitter = await deployEmitter(node.rpcUrl);
  slow = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      setTimeout(() => {
        fetch(node.rpcUrl, {
          method: 'POST',
          body: Buffer.concat(chunks),
          headers: { 'content-type': 'application/json' },
        })
          .then(async (r) =>
            res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()),
          )
          .catch(() => res.destroy());
      }, 20);
    });
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()));
  slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}`;
  for (let i = 0; i < 30; i++) {
    await emitTransfers(node.rpcUrl, emitter, addr(0), addr(0xa11ce + (i % 3)), BigInt(1000 * i + 1), 5);
    await anvilRpc(node.rpcUrl, 'anvil_mine', ['0x40']);
  }
}, 60_000);
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  slow?.closeAllConnections();
  await new Promise((r) => (slow ? slow.close(r) : r(undefined)));
  await node?.stop();
  rmSync(root, { recursive: true, force: true });
});

function runChild(configFile: string, busDir: string): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'evm-child.ts'), configFile, busDir],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  return child;
}

const checkpointNext = (dataDir: string) => {
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'ingest', 'evm-31337.json'), 'utf8')) as { next: number })
      .next;
  } catch {
    return -1;
  }
};

describe('EVM ingest killed mid-backfill', () => {
  it('resumes from the checkpoint with no gap; re-published events are identical', async () => {
    const pub = createPublicClient({ transport: http(node.rpcUrl) });
    // Two confirmations: the follower ingests up to the head less two.
    const head = Number(await pub.getBlockNumber()) - 2;
    const dataDir = join(root, 'data');
    const config = (rpcUrl: string) =>
      JSON.stringify({
        dataDir,
        chains: [
          {
            chainId: 31337,
            name: 'local',
            rpcUrls: [rpcUrl],
            confirmations: 2,
            maxRequestsPerSecond: 0,
            pollIntervalMs: 50,
            maxBlockRange: 16,
          },
        ],
        vaults: [
          {
            slug: 'v1',
            name: 'V1',
            symbol: 'V1',
            decimals: 6,
            vaultAddress: emitter,
            accountantAddress: addr(0xacc0),
            chainIds: [31337],
          },
        ],
      });
    const slowConfig = join(root, 'config-slow.json');
    const configFile = join(root, 'config.json');
    writeFileSync(slowConfig, config(slowUrl));
    writeFileSync(configFile, config(node.rpcUrl));
    const busDir = join(dataDir, 'bus');
    const first = runChild(slowConfig, busDir);
    await vi.waitFor(
      () => expect(checkpointNext(dataDir), 'a third of the backfill').toBeGreaterThan(head / 3),
      { timeout: 60_000, interval: 25 },
    );
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const killedAt = checkpointNext(dataDir);
    expect(killedAt).toBeLessThan(head);
    const second = runChild(configFile, busDir);
    await vi.waitFor(() => expect(checkpointNext(dataDir), 'the resumed backfill').toBe(head + 1), {
      timeout: 60_000,
      interval: 25,
    });
    second.kill('SIGKILL');
    await new Promise((r) => second.once('exit', r));

    const bus = new InProcessBus({ dir: busDir, partitions: 4 });
    await bus.connect();
    const blocks = await readFamily(bus, 'vaultstream.', 'blocks');
    const transfers = await readFamily(bus, 'vaultstream.', 'transfers');
    await bus.close();

    // Only the headers the ranges needed were read and stored (range-headers.ts): each canonical,
    // the last ingested block among them, far fewer than the blocks. A block holding a transfer is
    // known from its logs (anvil puts the block's timestamp on them): no header, its time the block's.
    const live = liveEvents(blocks, (b) => `${b.blockNumber}`);
    const headers = await Promise.all(
      live.map((b) => pub.getBlock({ blockNumber: BigInt(b.blockNumber as number) })),
    );
    expect(live.map((b) => [b.blockNumber, b.blockHash])).toEqual(
      headers.map((h) => [Number(h.number), h.hash]),
    );
    const logs = await pub.getLogs({ address: emitter, fromBlock: 0n });
    expect(logs).toHaveLength(150);
    expect(live.map((b) => b.blockNumber)).toContain(head);
    expect(live.length).toBeLessThan(head / 4);
    const timeOf = new Map<number, number>();
    for (const n of new Set(logs.map((l) => Number(l.blockNumber))))
      timeOf.set(n, Number((await pub.getBlock({ blockNumber: BigInt(n) })).timestamp));
    for (const t of liveEvents(transfers, (t) => `${t.blockHash}:${t.logIndex}`))
      expect(t.blockTimestamp, `transfer at ${t.blockNumber}`).toBe(timeOf.get(t.blockNumber as number));
    expect(
      liveEvents(transfers, (t) => `${t.blockHash}:${t.logIndex}`).map((t) => [
        t.txHash,
        t.logIndex,
        t.amount,
      ]),
    ).toEqual(logs.map((l) => [l.transactionHash, l.logIndex, BigInt(l.data).toString()]));
    // Duplicates come only from the range in flight at the kill, and are byte-for-byte the same event.
    for (const list of [blocks, transfers]) {
      const seen = new Map<string, string>();
      for (const r of list) {
        const id = `${r.blockHash}:${r.logIndex ?? ''}`;
        const text = JSON.stringify(r);
        if (seen.has(id)) expect(text).toBe(seen.get(id));
        seen.set(id, text);
      }
    }
    const dupBlocks = blocks.length - live.length;
    expect(dupBlocks).toBeLessThanOrEqual(16);
  }, 120_000);
});
