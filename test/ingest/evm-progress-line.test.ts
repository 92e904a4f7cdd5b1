/**
 * The backfill's progress log lines (cli/progress.ts) over the real EVM ingester
 * (ingest/evm/index.ts) and its progress meter, as `vaultstream start` wires them off a terminal
 * (cli/roles.ts: `follow` as the ingestion starts): the sparse chain (devnet/sparse-chain.ts) on
 * loopback at a fixed pace, so the backfill is still going when the first line comes, into the
 * in-process bus, the lines through a pino logger into the test. The first line already gives
 * the events per second since the ingestion began, not 0 until a second line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startProgress } from '../../cli/progress.ts';
import { parseConfig } from '../../core/config.ts';
import { sparseChainConfig, sparseVaultConfig, startSparseChain } from '../../devnet/sparse-chain.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { openBus } from './evm-support.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-evm-progress-line-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Seconds between the progress lines. */
const INTERVAL_S = 1.5;

describe('backfill progress lines over the real ingester', () => {
  it('gives the first line the events per second since the ingestion began', async () => {
    // 3,000 events, at most 100 an answer: 30 eth_getLogs at least, at 10 requests a second.
    const chain = await startSparseChain({ blocks: 50_000, events: 3_000, maxLogs: 100 });
    const config = parseConfig({
      dataDir: root,
      devnet: { enabled: false },
      chains: [{ ...sparseChainConfig(chain.url), maxRequestsPerSecond: 10 }],
      vaults: [sparseVaultConfig(chain.token)],
    });
    const bus = await openBus(join(root, 'bus'));
    const lines: { msg: string; events: number; eventsPerSecond: number; phase: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const display = startProgress({ log, intervalMs: INTERVAL_S * 1000, tty: false });
    const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log });
    display.follow(() => ingest.progress());
    try {
      const progress = () => lines.filter((l) => l.msg.startsWith('backfill sparse:'));
      await vi.waitFor(() => expect(progress().length).toBeGreaterThan(0), { timeout: 20_000, interval: 50 });
      const [first] = progress();
      expect(first.phase).toBe('backfill');
      expect(first.events).toBeGreaterThan(0);
      // Since the ingestion began, at least one interval ago: more than 0, at most events / interval.
      expect(first.eventsPerSecond).toBeGreaterThan(0);
      expect(first.eventsPerSecond).toBeLessThanOrEqual(Math.ceil(first.events / INTERVAL_S));
      expect(first.msg).toContain(`, ${first.eventsPerSecond} events/s,`);
    } finally {
      display.stop();
      await ingest.stop();
      await bus.close();
      await chain.stop();
    }
  }, 60_000);
});
