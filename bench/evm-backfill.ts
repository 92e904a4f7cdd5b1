/**
 * EVM ingester benchmark: `npx tsx bench/evm-backfill.ts [--size tiny|full] [--out FILE.json]
 * [--events 200000] [--per-tx 5000] [--empty-blocks 5000] [--range 2000]` (tiny: 2,000 events,
 * 1,000 per transaction, 50 empty blocks). Starts anvil, deploys the Emitter (devnet/emitter.ts:
 * many share Transfer logs per transaction), mines the empty blocks, then the events (one
 * transaction per block), then times the EVM ingester alone backfilling them into the in-process
 * bus (fsync'd log): events/s, blocks/s, and where the time goes (waiting on RPC, publishing to
 * the bus, the rest: decoding, mapping, encoding). A diagnostic (no target): bench/backfill.ts
 * times the whole CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '../bus/inprocess.ts';
import type { Bus, BusMessage } from '../bus/types.ts';
import { parseConfig } from '../core/config.ts';
import { createLogger } from '../core/log.ts';
import { startAnvil } from '../devnet/anvil.ts';
import { addr, anvilRpc, deployEmitter, emitTransfers } from '../devnet/emitter.ts';
import { startEvmIngest } from '../ingest/evm/index.ts';
import { EventCodec } from '../schemas/codec.ts';
import { benchArgs, round, row, writeReport } from './report.ts';

const { values, size, out } = benchArgs(
  'evm-backfill',
  { events: undefined, 'per-tx': undefined, 'empty-blocks': undefined, range: '2000' },
  {
    tiny: { events: '2000', 'per-tx': '1000', 'empty-blocks': '50' },
    full: { events: '200000', 'per-tx': '5000', 'empty-blocks': '5000' },
  },
);
const events = Number(values.events);
const perTx = Number(values['per-tx']);
const emptyBlocks = Number(values['empty-blocks']);
const range = Number(values.range);

/** The in-process bus, timing its publish calls (fsync included). */
class TimedBus extends InProcessBus {
  publishMs = 0;
  published = 0;
  override async publish(topic: string, messages: BusMessage[]): Promise<void> {
    const t = performance.now();
    await super.publish(topic, messages);
    this.publishMs += performance.now() - t;
    this.published += messages.length;
  }
}

const root = mkdtempSync(join(tmpdir(), 'vs-evm-bench-'));
const node = await startAnvil({ chainId: 31337 });
try {
  const emitter = await deployEmitter(node.rpcUrl);
  const txs = Math.ceil(events / perTx);
  const t0 = performance.now();
  // The empty blocks first: anvil's anvil_mine slows down with every log already stored.
  await anvilRpc(node.rpcUrl, 'anvil_mine', [`0x${emptyBlocks.toString(16)}`]);
  for (let i = 0; i < txs; i++) {
    const n = Math.min(perTx, events - i * perTx);
    await emitTransfers(node.rpcUrl, emitter, addr(0), addr(0x1000 + (i % 50)), BigInt(i * perTx + 1), n);
  }
  const head = Number(await anvilRpc<string>(node.rpcUrl, 'eth_blockNumber'));
  const generateSeconds = (performance.now() - t0) / 1000;
  console.error(
    `generated ${events} events in ${txs} txs over ${head + 1} blocks in ${generateSeconds.toFixed(1)} s`,
  );

  const config = parseConfig({
    dataDir: root,
    chains: [
      {
        chainId: 31337,
        name: 'bench',
        rpcUrls: [node.rpcUrl],
        // None: the bench times reading every block it generated, up to the head.
        confirmations: 0,
        maxRequestsPerSecond: 0,
        pollIntervalMs: 100,
        maxBlockRange: range,
        requestTimeoutMs: 120_000,
      },
    ],
    vaults: [
      {
        slug: 'bench',
        name: 'Bench',
        symbol: 'B',
        decimals: 6,
        vaultAddress: emitter,
        accountantAddress: addr(0xacc0),
        chainIds: [31337],
      },
    ],
    ingest: { snapshotIntervalSeconds: 86_400, progressLogIntervalMs: 2_000 },
  });
  const bus = new TimedBus({ dir: join(root, 'bus'), partitions: 4 });
  await bus.connect();
  const bench = bus as Bus;
  const started = performance.now();
  const ingest = startEvmIngest({
    config,
    bus: bench,
    codec: new EventCodec(),
    log: createLogger(process.env.LOG_LEVEL ?? 'info', 'evm-bench'),
  });
  // Done when every block is taken and its events counted (the count follows the block cursor).
  const deadline = Date.now() + 600_000;
  for (;;) {
    const p = ingest.progress()[0];
    if (p && p.next === head + 1 && p.eventsPublished >= events) break;
    if (Date.now() > deadline)
      throw new Error(`backfill not done in 600 s: ${JSON.stringify(p)} (head ${head}, ${events} events)`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  const p = ingest.progress()[0];
  await ingest.stop();
  await bus.close();
  const rpcSeconds = p.rpcWaitMs / 1000;
  const publishSeconds = bus.publishMs / 1000;
  const result = {
    node: process.version,
    events,
    eventsPerTx: perTx,
    blocks: head + 1,
    maxBlockRange: range,
    generateSeconds: Number(generateSeconds.toFixed(2)),
    backfillSeconds: Number(seconds.toFixed(2)),
    eventsPublished: p.eventsPublished,
    eventsPerSecond: Math.round(p.eventsPublished / seconds),
    blocksPerSecond: Math.round((head + 1) / seconds),
    messagesPublished: bus.published,
    rpcWaitSeconds: Number(rpcSeconds.toFixed(2)),
    rpcWaitShare: Number((rpcSeconds / seconds).toFixed(3)),
    publishSeconds: Number(publishSeconds.toFixed(2)),
    publishShare: Number((publishSeconds / seconds).toFixed(3)),
    otherShare: Number((1 - (rpcSeconds + publishSeconds) / seconds).toFixed(3)),
  };
  if (p.eventsPublished !== events)
    throw new Error(`published ${p.eventsPublished} events, expected ${events}`);
  const what = `EVM ingester alone, ${events.toLocaleString('en')} logs`;
  writeReport(out, {
    name: 'evm-backfill',
    size,
    rows: [
      row(`${what}: backfill into the in-process bus`, result.eventsPerSecond, 'events/s'),
      row(`${what}: share of the time waiting on RPC`, round(result.rpcWaitShare, 3), 'share'),
    ],
    result,
  });
} finally {
  await node.stop();
  rmSync(root, { recursive: true, force: true });
}
