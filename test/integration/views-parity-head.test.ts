/**
 * The vault resources answered from the head (`metrics_vault_head`, migration 025,
 * api/read/vault-head.ts) equal the documented SQL over the views (docs/queries/api-vault-numbers.sql).
 * views-parity.test.ts runs the API at the vault scenario's clock, a day the head is not of, so
 * it checks the daily tables' path; here the API clock is today, the day the settle wrote the
 * head for, so the vault resources read the head.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { settleMetrics } from '../../views/settle.ts';
import { useApiHarness } from '../support/api-fixture.ts';
import { runDoc } from '../support/doc-queries.ts';
import { expectVaultNumbers } from '../support/vault-numbers.ts';
import { SLUG, vaultScenarioLines } from '../support/vault-scenario.ts';

const NOW_MS = Date.now();
const NOW = Math.floor(NOW_MS / 1000);
const vaultApi = useApiHarness(vaultScenarioLines, NOW_MS);
const SLUGS = [SLUG.alpha, SLUG.beta, SLUG.gamma];

// Flows at today's clock (the scenario's are weeks old): a deposit and a withdrawal of alpha in
// the last hours and an open redemption request of beta, settled before any request.
beforeAll(async () => {
  const ev = (vault: string, t: number, n: number) => ({
    event_id: `98866:0xf10${n}:0`,
    chain_id: 98866,
    block_number: 90_000_000 + n,
    block_hash: `0xf10${n}`,
    block_time: t,
    tx_hash: `0xf10${n}`,
    log_index: 0,
    removed: 0,
    ver: 90_000_000 + n,
    vault,
  });
  const user = '0x00000000000000000000000000000000000000a1';
  const flow = (n: number, kind: string, assets: string) => ({
    ...ev(SLUG.alpha, NOW - 3600 * n, n),
    kind,
    user,
    shares: assets,
    shares_token: user,
    assets,
    assets_token: user,
    assets_decimals: 6,
  });
  await vaultApi.store.insert('activity_raw', [
    flow(1, 'DEPOSIT', '2500000000'),
    flow(2, 'WITHDRAW', '700000001'),
  ]);
  await vaultApi.store.insert('redemptions_raw', [
    {
      ...ev(SLUG.beta, NOW - 600, 3),
      queue: '0x00000000000000000000000000000000000000ee',
      kind: 'REQUEST',
      request_id: 'head-1',
      user,
      offer_token: user,
      want_token: user,
      amount: '123456789',
      min_price: '1',
      want_decimals: 6,
      deadline: NOW + 30 * 86_400,
    },
  ]);
  await settleMetrics(vaultApi.store);
}, 60_000);

describe('views parity: vault resources from the head = docs/queries over the views', () => {
  it('details, details-lite, the vault and the vaults list, at the clock of the head', async () => {
    // The head is of today for every vault: the vault resources take it.
    const days = await vaultApi.store.query<{ n: string }>(
      `SELECT toString(count()) AS n FROM ${vaultApi.store.database}.metrics_vault_head FINAL
       WHERE day = toDate(toDateTime(${NOW}, 'UTC'))`,
    );
    expect(Number(days[0].n)).toBe(3);
    let nonZero = 0;
    for (const slug of SLUGS) {
      const { row, compared } = await expectVaultNumbers(vaultApi, slug, NOW);
      expect(compared).toBe(33);
      for (const f of ['tvl', 'liquidFunds', 'tokenPrice', 'holders', 'apy_rolling30d'])
        if (Number(row[f] ?? 0) !== 0) nonZero++;
    }
    // The scenario's history makes these numbers non-trivial at today's clock too.
    expect(nonZero).toBeGreaterThanOrEqual(10);
    const [alpha] = await runDoc(vaultApi, 'api-vault-numbers', { slug: SLUG.alpha, now: NOW });
    const [beta] = await runDoc(vaultApi, 'api-vault-numbers', { slug: SLUG.beta, now: NOW });
    expect(Number(alpha.volume24h)).toBeGreaterThan(0);
    expect(Number(beta.pendingRedemptionsValue)).toBeGreaterThan(0);
  });
});
