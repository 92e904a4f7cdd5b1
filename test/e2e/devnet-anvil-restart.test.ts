/**
 * `vaultstream start` while the devnet's anvil nodes restart keeping fewer block states
 * (devnet/state-trim.ts): live ticks go on, each node is down for a moment
 * and comes back on the same port with the same chain. The ingester rides through on its
 * retries: `/readyz` answers 200 at every poll, no chain sees a reorg or logs an error, and
 * once the ticks end every vault's holders and TVL equal the ground truth (nothing lost or
 * counted twice across the restart). From the restart on the nodes keep the transactions of
 * only the last 24 blocks (`devnet.liveTransactionBlocks`, as `vaultstream start` keeps 2,000):
 * the 20 ticks after it drop those of the blocks before it, which the ingester read long before,
 * so none of this changes. They restart again every 10 ticks (`devnet.restartTicks`, 4,800 by
 * default), at ticks 70 and 80, each from a checkpoint taken after the one before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  getJson,
  holdersMatchTruth,
  killServices,
  type Service,
  startService,
  stderrTail,
  waitDrained,
} from '../support/devnet-service.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-e2e-anvil-restart-'));
afterAll(() => {
  killServices();
  // A killed service's analysts process exits when it sees its parent gone: it may still write.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

const RESTARTED = /"msg":"devnet: anvil nodes restarted keeping fewer block states"/;
/**
 * The restart comes after the ingester has read the history (which needs the history's states):
 * 60 ticks of 300 ms after the devnet is live, far past its readiness on a loaded machine.
 */
const HISTORY_TICKS = 60;
const LIVE_TICKS = 80;
/** Blocks whose transactions the restarted nodes keep. */
const KEPT = 24;

/** The primary chain's head, once it has not moved for a while (the last tick is written). */
async function stillHead(svc: Service): Promise<bigint> {
  const client = [...svc.rpc.values()][0];
  let last = -1n;
  return vi.waitFor(
    async () => {
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const same = head === last;
      last = head;
      expect(same, `the chain to stand still; ${stderrTail(svc)}`).toBe(true);
      return head;
    },
    { timeout: 120_000, interval: 2_000 },
  );
}

describe('the devnet restarting its anvil nodes under a running service', () => {
  it('serves throughout, sees no reorg and ends on the ground truth', async () => {
    const svc = await startService(join(dir, 'data'), {
      backfillDays: '2',
      vaults: '2',
      liveIntervalMs: '300',
      liveTicks: String(LIVE_TICKS),
      reorgAtTick: '0',
      historyStatesTicks: String(HISTORY_TICKS),
      liveStates: '16',
      liveTransactionBlocks: String(KEPT),
      restartTicks: '10',
    });
    const polls: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        polls.push(
          await fetch(`${svc.api}/readyz`).then(
            (r) => r.status,
            () => 0,
          ),
        );
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    // The three restarts (ticks 60, 70, 80); a restart's tick holds the chain still for seconds.
    const restarts = () => svc.log.stderr.split('\n').filter((l) => RESTARTED.test(l));
    await vi.waitFor(() => expect(restarts().length, stderrTail(svc)).toBe(3), {
      timeout: 180_000,
      interval: 500,
    });
    const restarted = JSON.parse(svc.log.stderr.split('\n').find((l) => RESTARTED.test(l)) as string);
    expect(restarted.nodes).toHaveLength(svc.rpc.size);
    const head = await stillHead(svc);
    expect(restarts().map((l) => JSON.parse(l).restart)).toEqual([1, 2, 3]);
    // Every tick's block has transactions: those of a block past KEPT are gone, the head's are there.
    const client = [...svc.rpc.values()][0];
    const dropped = await client.getBlock({ blockNumber: head - BigInt(KEPT) - 1n });
    expect(dropped.transactions, `block ${dropped.number}'s transactions`).toEqual([]);
    expect((await client.getBlock({ blockNumber: head })).transactions.length).toBeGreaterThan(0);
    await waitDrained(svc);
    polling = false;
    await poller;
    expect(polls.length, 'readiness polls').toBeGreaterThan(20);
    expect(
      polls.filter((s) => s !== 200),
      'readiness answers other than 200',
    ).toEqual([]);
    const status = await getJson(svc, '/status');
    for (const p of status.ingest.evm) {
      expect(p.phase, `chain ${p.chainId}`).toBe('live');
      expect(p.reorgs, `chain ${p.chainId} reorgs`).toBe(0);
    }
    await holdersMatchTruth(svc);
    expect(svc.log.stderr.split('\n').filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    svc.child.kill('SIGINT');
    expect(await svc.exited).toBe(0);
  }, 400_000);
});
