/**
 * The API harness replays through `streams --until-drained`, which serves the SQL interface:
 * on an ephemeral port, so suites running in parallel (and other checkouts on the machine) do
 * not fail with PORT_IN_USE on the default 8123. Here 8123 is held (by this test, or already
 * by someone else) while the harness starts.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startApiHarness } from '../support/api-harness.ts';
import { vaultScenarioLines } from '../support/vault-scenario.ts';

let held: Server | undefined;
afterAll(async () => {
  await new Promise<void>((r) => (held ? held.close(() => r()) : r()));
});

describe('api harness', () => {
  it('starts while 127.0.0.1:8123 is in use', async () => {
    held = await new Promise<Server | undefined>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(undefined)); // already in use: the premise holds
      s.listen(8123, '127.0.0.1', () => resolve(s));
    });
    const api = await startApiHarness(vaultScenarioLines());
    try {
      expect((await api.request('/v1/vaults?status=all')).status).toBe(200);
    } finally {
      await api.close();
    }
  }, 120_000);
});
