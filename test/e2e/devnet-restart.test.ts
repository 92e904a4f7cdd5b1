/**
 * `vaultstream start` twice on the same data directory. The first run is stopped as a
 * terminal's Ctrl-C does (SIGINT to its whole process group): it must stop quietly (no
 * ERROR line, exit 0) with its anvil nodes gone. The second run (another seed, so
 * another world) builds a new devnet; the previous devnet's checkpoints, bus log and
 * store describe chains that no longer exist, so it must start from an empty data
 * directory (saying so once) and then answer exactly the second run's ground truth.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  getJson,
  holdersMatchTruth,
  killServices,
  startService,
  waitDrained,
} from '../support/devnet-service.ts';
import * as T from '../support/devnet-truth.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-e2e-restart-'));
afterAll(() => {
  killServices();
  // A killed service's analysts process exits when it sees its parent gone: it may still write.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

const WIPED = /"msg":"devnet: the data directory held a previous devnet's data/g;
/** Every token holder's summed balance, as text: what tells two simulated worlds apart. */
const world = (t: T.GroundTruthJson) => [...T.tokenHolderBalances(t)].map(([k, v]) => `${k}=${v}`).join(',');
const errorLines = (stderr: string) => stderr.split('\n').filter((l) => /"level":(50|60)/.test(l));

describe('vaultstream start twice on one data directory', () => {
  it('stops quietly on Ctrl-C, then starts over on a new devnet and serves its numbers', async () => {
    const dataDir = join(dir, 'data');
    const settings = { backfillDays: '2', liveIntervalMs: '0', vaults: '2' };
    const first = await startService(dataDir, { ...settings, seed: '1' }, { ownGroup: true });
    await waitDrained(first);
    await holdersMatchTruth(first);
    expect(first.log.stderr.match(WIPED)).toBeNull();
    const firstRpc = [...first.rpc.values()][0];
    // The same file is rewritten by the next run: keep this run's world.
    const firstWorld = world(T.readTruth(first.truthFile));

    // Ctrl-C: the whole foreground group gets SIGINT; only vaultstream is in it.
    process.kill(-(first.child.pid as number), 'SIGINT');
    expect(await first.exited).toBe(0);
    expect(errorLines(first.log.stderr)).toEqual([]);
    await expect(firstRpc.getBlockNumber({ cacheTime: 0 })).rejects.toThrow();

    const second = await startService(dataDir, { ...settings, seed: '2' });
    expect(second.log.stderr.match(WIPED)).toHaveLength(1);
    await waitDrained(second);
    const status = await getJson(second, '/status');
    for (const p of status.ingest.evm) {
      expect(p.phase, `chain ${p.chainId}`).toBe('live');
      expect(p.reorgs, `chain ${p.chainId} reorgs`).toBe(0);
    }
    await holdersMatchTruth(second);
    // The second world differs from the first: the comparison above could not pass on stale data.
    expect(world(T.readTruth(second.truthFile))).not.toBe(firstWorld);
    expect(errorLines(second.log.stderr)).toEqual([]);
    second.child.kill('SIGINT');
    expect(await second.exited, 'the second run to stop').toBe(0);
  }, 300_000);
});
