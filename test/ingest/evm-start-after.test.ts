/**
 * The EVM ingester's `startAfter` (cli/roles.ts passes the end of the other roles' start-up): no
 * RPC call before it resolves, progress served meanwhile (phase `starting`), the backfill once it
 * does, and a stop before it resolves ends at once. On the sparse chain of the benchmark
 * (devnet/sparse-chain.ts), served on loopback, which counts the calls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import { sparseVaultConfig, startSparseChain } from '../../devnet/sparse-chain.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { openBus, readFamily } from './evm-support.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-evm-start-after-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('EVM ingest, startAfter', () => {
  it('calls no RPC before it resolves, serves progress meanwhile, then backfills', async () => {
    const chain = await startSparseChain({ blocks: 5_000, events: 40 });
    try {
      const dataDir = join(root, 'a');
      const config = parseConfig({
        dataDir,
        devnet: { enabled: false },
        chains: [{ chainId: 42161, name: 'sparse', rpcUrls: [chain.url], confirmations: 0 }],
        vaults: [sparseVaultConfig(chain.token)],
      });
      const bus = await openBus(join(dataDir, 'bus'));
      let go = () => {};
      const startAfter = new Promise<void>((resolve) => {
        go = resolve;
      });
      const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger, startAfter });
      await new Promise((r) => setTimeout(r, 300));
      expect(chain.requests).toBe(0);
      expect(ingest.progress().map((p) => p.phase)).toEqual(['starting']);
      go();
      await vi.waitFor(() => expect(ingest.progress()[0].next).toBe(chain.head + 1), {
        timeout: 30_000,
        interval: 25,
      });
      await ingest.stop();
      expect(await readFamily(bus, config.topicPrefix, 'transfers')).toHaveLength(40);

      // Stopped before it resolves: the stop ends at once, nothing was asked of the chain.
      const before = chain.requests;
      const idle = startEvmIngest({
        config: { ...config, dataDir: join(root, 'b') },
        bus,
        codec: new EventCodec(),
        log: silentLogger,
        startAfter: new Promise(() => {}),
      });
      await idle.stop();
      expect(chain.requests).toBe(before);
      await bus.close();
    } finally {
      await chain.stop();
    }
  }, 60_000);
});
