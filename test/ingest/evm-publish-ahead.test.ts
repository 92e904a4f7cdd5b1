/**
 * The follower publishes a range deeper than the reorg window while it processes the next one
 * (ingest/evm/follower.ts, `inflight`). On the sparse chain of the benchmark
 * (devnet/sparse-chain.ts, served on loopback; at most 100 logs an answer, so many ranges) into
 * the real in-process bus, with one publish failing as a bus that cannot be written does:
 * - the failure is the next round's, and the follower goes back to the failed range (its
 *   `next`), nothing after it having been published;
 * - the checkpoint on disk never points past a range before its publish has resolved;
 * - in the end every transfer is on the bus once, in block order, and the checkpoint is at the
 *   head.
 * And a range's records are encoded (`PublishEmitted.prepare`) while the previous range's publish
 * is still in flight: only its bus writes wait for it. The last range's checkpoint is written
 * while its publish is in flight and replaces the checkpoint once it is durable.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { silentLogger } from '../../core/log.ts';
import { type SparseChain, sparseVaultConfig, startSparseChain } from '../../devnet/sparse-chain.ts';
import { checkpointFile } from '../../ingest/checkpoint.ts';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import { ChainFollower } from '../../ingest/evm/follower.ts';
import { emittedPublisher, type PublishEmitted } from '../../ingest/evm/publish.ts';
import type { ChainCheckpoint } from '../../ingest/evm/reorg.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { openBus, readFamily, sparseChainReader } from './evm-support.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-evm-publish-ahead-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A follower's parts over `chain` in a directory of its own: its config, bus, real publisher and checkpoint. */
async function followerOf(chain: SparseChain, name: string) {
  const dataDir = join(root, name);
  const config = parseConfig({
    dataDir,
    devnet: { enabled: false },
    chains: [
      { chainId: 42161, name: 'sparse', rpcUrls: [chain.url], confirmations: 0, maxRequestsPerSecond: 0 },
    ],
    vaults: [sparseVaultConfig(chain.token)],
  });
  const chainConfig = config.chains[0];
  const bus = await openBus(join(dataDir, 'bus'));
  const checkpoint = checkpointFile<ChainCheckpoint>(dataDir, 'evm-42161');
  return {
    config,
    bus,
    real: emittedPublisher(bus, new EventCodec(), config.topicPrefix),
    checkpoint,
    /** The follower of the chain, publishing through `publish`. */
    follow: (publish: PublishEmitted) =>
      new ChainFollower({
        contracts: chainContracts(config, chainConfig),
        reader: sparseChainReader(chain, chainConfig.maxBlockRange),
        publish,
        checkpoint,
        log: silentLogger,
        clock: Date.now,
        snapshotIntervalSeconds: 3600,
        onSnapshotError: () => {},
      }),
  };
}

/** Rounds until the follower has read the chain's head, then its publishes settle. */
async function toHead(follower: ChainFollower): Promise<void> {
  for (let k = 0; k < 200 && !(follower.head >= 0 && follower.next > follower.head); k++)
    await follower.round();
  await follower.settle();
}

describe('EVM follower, a deep range published while the next is processed', () => {
  it('goes back to a range whose publish failed; never checkpoints past an unpublished range', async () => {
    const chain = await startSparseChain({ blocks: 100_000, events: 1_000, maxLogs: 100 });
    try {
      const { config, bus, real, checkpoint, follow } = await followerOf(chain, 'a');
      const checkpointed = () => checkpoint.load()?.next ?? 0;
      let transferPublishes = 0;
      let failedAt: number | undefined;
      let roundsAfterFailedCall = 0;
      const pastUnpublished: string[] = [];
      const publish: PublishEmitted = async (items) => {
        const first = Math.min(...items.map((i) => i.record.blockNumber as number));
        if (!items.some((i) => i.family === 'transfers')) return real(items);
        const failing = ++transferPublishes === 3;
        if (failing) {
          failedAt = first;
          roundsAfterFailedCall = 0;
        }
        // Slower than a checkpoint write: one written before this publish resolves would show.
        await new Promise((r) => setTimeout(r, 40));
        if (failing) throw new VaultstreamError('BUS_UNAVAILABLE', 'cannot append to bus log (test)');
        if (checkpointed() > first) pastUnpublished.push(`${checkpointed()} > ${first}`);
        await real(items);
      };
      const follower = follow(publish);

      const failures: unknown[] = [];
      /** Rounds that returned between the failing publish call and the failure. */
      const roundsBetween: number[] = [];
      for (let k = 0; k < 200 && !(follower.head >= 0 && follower.next > follower.head); k++) {
        try {
          await follower.round();
          roundsAfterFailedCall++;
        } catch (e) {
          failures.push(e);
          roundsBetween.push(roundsAfterFailedCall);
          // The failed range is read again: the follower is back at its first block.
          expect(follower.next).toBe(failedAt);
          expect(checkpointed()).toBeLessThanOrEqual(failedAt as number);
        }
        if (checkpointed() > follower.next) pastUnpublished.push(`checkpoint ahead of the follower`);
      }
      await follower.settle();

      // The failed range was deep below the window: its publish went on while the next range
      // was processed, and the failure was that next round's.
      expect(failures).toHaveLength(1);
      expect((failures[0] as VaultstreamError).code).toBe('BUS_UNAVAILABLE');
      expect(roundsBetween).toEqual([1]);
      expect(pastUnpublished).toEqual([]);
      const transfers = await readFamily(bus, config.topicPrefix, 'transfers');
      const blocks = transfers.map((t) => t.blockNumber as number);
      expect(blocks).toEqual(chain.eventBlocks);
      expect(new Set(transfers.map((t) => `${t.blockNumber}:${t.logIndex}`)).size).toBe(1_000);
      expect(checkpointed()).toBe(chain.head + 1);
      await bus.close();
    } finally {
      await chain.stop();
    }
  }, 60_000);

  it("encodes a range's records while the previous range's publish is in flight, and writes them after it", async () => {
    const chain = await startSparseChain({ blocks: 100_000, events: 1_000, maxLogs: 100 });
    try {
      const { config, bus, real, follow } = await followerOf(chain, 'b');
      let sending = 0;
      let overlaps = 0;
      let wrongOrder = 0;
      let lastSent = -1;
      const publish: PublishEmitted = (items) => real(items);
      publish.prepare = async (items) => {
        const first = Math.min(...items.map((i) => i.record.blockNumber as number));
        if (sending > 0) overlaps++;
        const send = await (real.prepare as NonNullable<PublishEmitted['prepare']>)(items);
        return async () => {
          if (sending > 0 || first < lastSent) wrongOrder++;
          lastSent = first;
          sending++;
          try {
            // Slower than processing a range: the next one is encoded meanwhile.
            await new Promise((r) => setTimeout(r, 40));
            await send();
          } finally {
            sending--;
          }
        };
      };
      const follower = follow(publish);
      await toHead(follower);
      // Encoded ahead: several ranges' records were prepared while an earlier publish was going on.
      expect(overlaps).toBeGreaterThan(3);
      // Never two publishes at once, always in range order.
      expect(wrongOrder).toBe(0);
      const transfers = await readFamily(bus, config.topicPrefix, 'transfers');
      expect(transfers.map((t) => t.blockNumber as number)).toEqual(chain.eventBlocks);
      await bus.close();
    } finally {
      await chain.stop();
    }
  }, 60_000);

  it("writes the last range's checkpoint while its publish is in flight, and replaces the checkpoint and moves its progress after it", async () => {
    const chain = await startSparseChain({ blocks: 20_000, events: 200, maxLogs: 100 });
    try {
      const { bus, real, checkpoint, follow } = await followerOf(chain, 'c');
      const during: { tmp?: number; checkpoint?: number; next?: number }[] = [];
      const publish: PublishEmitted = (items) => real(items);
      publish.prepare = async (items) => {
        const send = await (real.prepare as NonNullable<PublishEmitted['prepare']>)(items);
        const last = items.some((i) => i.family === 'blocks' && i.record.blockNumber === chain.head);
        return async () => {
          if (last) {
            // Held: the checkpoint's temporary file is written meanwhile, the checkpoint is not replaced.
            await new Promise((r) => setTimeout(r, 300));
            let tmp: number | undefined;
            try {
              tmp = JSON.parse(readFileSync(`${checkpoint.path}.tmp`, 'utf8')).next;
            } catch {}
            during.push({ tmp, checkpoint: checkpoint.load()?.next, next: follower.next });
          }
          await send();
        };
      };
      const follower = follow(publish);
      await toHead(follower);
      expect(during).toHaveLength(1);
      expect(during[0].tmp).toBe(chain.head + 1);
      expect(during[0].checkpoint).toBeLessThan(chain.head + 1);
      // Its progress says the range is ingested only once the bus has it.
      expect(during[0].next).toBeLessThan(chain.head + 1);
      expect(checkpoint.load()?.next).toBe(chain.head + 1);
      expect(follower.next).toBe(chain.head + 1);
      await bus.close();
    } finally {
      await chain.stop();
    }
  }, 60_000);
});
