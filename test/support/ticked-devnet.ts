/**
 * A small devnet whose live ticks the test runs itself (no timer, no reorg): started before the
 * suite's tests, stopped and removed after them. For the suites on the nodes' memory and disk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { type Devnet, startDevnet } from '../../devnet/run.ts';

export function tickedDevnet(prefix: string, devnet: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const settings = parseConfig({
    devnet: { enabled: true, vaults: 2, backfillDays: 2, liveIntervalMs: 0, reorgAtTick: 0, ...devnet },
  }).devnet;
  const suite = { settings, devnet: undefined as unknown as Devnet };
  beforeAll(async () => {
    suite.devnet = await startDevnet({ settings, dataDir: dir });
  }, 300_000);
  afterAll(async () => {
    await suite.devnet?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return suite;
}
