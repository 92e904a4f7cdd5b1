/**
 * The simulator's history is a function of its seed: two devnets backfilled with
 * the same seed book the same ground truth (bridges across chains included), and
 * another seed books another one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { startDevnet } from '../../devnet/run.ts';

const dirs: string[] = [];

async function backfilledTruth(seed: number) {
  const dir = mkdtempSync(join(tmpdir(), 'vs-devnet-det-'));
  dirs.push(dir);
  const settings = parseConfig({
    devnet: { chainIds: [98866, 1], vaults: 2, backfillDays: 4, liveIntervalMs: 0, seed },
  }).devnet;
  const devnet = await startDevnet({ settings, dataDir: dir });
  try {
    return devnet.simulator.truth.toJSON();
  } finally {
    await devnet.stop();
  }
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('simulator determinism', () => {
  it('books the same history for the same seed and another for another seed', async () => {
    const a = await backfilledTruth(11);
    const b = await backfilledTruth(11);
    const c = await backfilledTruth(12);
    expect(a.actions.depositVeda + a.actions.depositNucleus + a.actions.depositNest).toBeGreaterThan(0);
    expect(b).toEqual(a);
    expect(c.balances).not.toEqual(a.balances);
  });
});
