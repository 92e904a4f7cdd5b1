/**
 * The EVM ingester against a provider with a budget of calls a second (devnet/sparse-chain.ts
 * `maxCallsPerSecond`: a request over it is refused whole with HTTP 429, as providers throttle),
 * on the service's default retries. Logs without `blockTimestamp` make the backfill
 * read a header for every event block, in batches of 100 sent at once: far over the budget. A
 * request refused as over the rate is retried without using up its attempts
 * (rpc/evm-transport.ts `RATE_LIMITED_ATTEMPTS`), so no round fails: before, every round ran out
 * of attempts, started over, and the backfill never passed 27,300 of its 200,000 blocks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import { sparseChainConfig, sparseVaultConfig, startSparseChain } from '../../devnet/sparse-chain.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { openBus, readFamily } from './evm-support.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-evm-throttled-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('EVM ingest behind a provider that throttles calls', () => {
  it('backfills every event through the refusals, no round failing', async () => {
    const chain = await startSparseChain({
      blocks: 200_000,
      events: 3_000,
      logTimestamps: false,
      maxCallsPerSecond: 400,
    });
    try {
      const dataDir = join(root, 'a');
      const config = parseConfig({
        dataDir,
        devnet: { enabled: false },
        // No request rate of the service's own and no span limit on eth_getLogs: the 3,000 event
        // blocks' headers come in a few wide ranges, 100 to a batch, 4 batches at once.
        chains: [sparseChainConfig(chain.url)],
        vaults: [sparseVaultConfig(chain.token)],
      });
      const bus = await openBus(join(dataDir, 'bus'));
      const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
      const phases = new Set<string>();
      await vi.waitFor(
        () => {
          phases.add(ingest.progress()[0].phase);
          expect(ingest.progress()[0].next).toBe(chain.head + 1);
        },
        { timeout: 60_000, interval: 20 },
      );
      await ingest.stop();
      expect(phases.has('failing'), [...phases].join(', ')).toBe(false);

      const transfers = await readFamily(bus, config.topicPrefix, 'transfers');
      expect(transfers).toHaveLength(3_000);
      // Each event's time is its block's, from the header read for it.
      for (const t of transfers) expect(t.blockTimestamp).toBe(chain.timeOf(t.blockNumber as number));
      // The provider did refuse: the backfill went over its budget.
      expect(chain.throttled).toBeGreaterThan(0);
      await bus.close();
    } finally {
      await chain.stop();
    }
  }, 90_000);
});
