/**
 * The ten example queries of docs/queries (01-*.sql .. 10-*.sql) run as written
 * on the vault scenario, with fees of several kinds (claims among them) and two Solana mint
 * flows added, and each returns rows; a few of their numbers are checked against the events.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useApiHarness } from '../support/api-fixture.ts';
import { ROOT } from '../support/cli.ts';
import { runDoc } from '../support/doc-queries.ts';
import { base58, eventSequence, HOUR } from '../support/events.ts';
import { dayTs, holders, NOW, PRIMARY, SLUG, vaultScenarioLines } from '../support/vault-scenario.ts';

const chain = eventSequence(900_000);
const line = (family: string, record: unknown) => JSON.stringify({ family, record });
/** Fees of alpha: 100 USDC management and 20 performance on day 40, 50 claimed on day 41, 7 deposit fees on day 10. */
const fee = (i: number, kind: string, usdc: number) =>
  line('fees', {
    ...chain(PRIMARY, dayTs(i) + 5 * HOUR),
    vault: SLUG.alpha,
    kind,
    token: '0x000000000000000000000000000000000000c0c0',
    amount: String(usdc * 1_000_000),
    decimals: 6,
    usdPrice: '1',
  });
const step = (signature: string, name: string, status: string, at: number) =>
  line('mint_steps', { signature, step: name, status, observedAt: at * 1000, fields: {}, error: '' });
const SIG_DONE = base58(88, 1);
const SIG_FAILED = base58(88, 2);
const STEPS = ['solana', 'cctpAttestation', 'predicate', 'relay', 'composer', 'oft', 'solanaMint'];
const extra = [
  fee(40, 'MANAGEMENT', 100),
  fee(40, 'PERFORMANCE', 20),
  fee(41, 'CLAIMED', 50),
  fee(10, 'DEPOSIT', 7),
  ...STEPS.map((s, k) => step(SIG_DONE, s, 'completed', NOW - 3600 + k)),
  step(SIG_FAILED, 'solana', 'completed', NOW - 600),
  step(SIG_FAILED, 'cctpAttestation', 'failed', NOW - 500),
];

const api = useApiHarness(() => [...vaultScenarioLines(), ...extra], NOW * 1000);

const EXAMPLES = readdirSync(join(ROOT, 'docs', 'queries'))
  .filter((f) => /^\d\d-.*\.sql$/.test(f))
  .map((f) => f.slice(0, -4))
  .sort();

describe('example queries (docs/queries/NN-*.sql)', () => {
  it('there are ten', () => {
    expect(EXAMPLES).toHaveLength(10);
  });

  it.each(EXAMPLES)('%s runs as written and returns rows', async (name) => {
    const rows = await runDoc(api, name);
    expect(rows.length).toBeGreaterThan(0);
  });

  it('fees per month: accrued kinds sum without the claims, which have their own column', async () => {
    const rows = await runDoc(api, '04-fees-per-month-by-kind');
    const oct = rows.find((r) => r.vault === SLUG.alpha && r.month === '2026-10-01');
    const sep = rows.find((r) => r.vault === SLUG.alpha && r.month === '2026-09-01');
    expect(oct).toMatchObject({ management: 100, performance: 20, accrued_total: 120, claimed: 50 });
    expect(sep).toMatchObject({ deposit: 7, accrued_total: 7, claimed: 0 });
  });

  it('top holders: balances summed across chains, valued at the current share price', async () => {
    const rows = await runDoc(api, '03-top-holders-usd');
    const top = rows.find((r) => r.vault === SLUG.alpha);
    // h0: 1,000,000 minted on 98866 less 100,000 moved, plus 500,000 on chain 1 (18 decimals there)
    expect(top?.holder).toBe(holders[0]);
    expect(top?.shares).toBe(1_400_000);
    expect([...((top?.chains ?? []) as number[])].sort()).toEqual([1, PRIMARY]);
  });

  it('mint flows by status, failed redemptions and chain lag name what the events hold', async () => {
    const flows = await runDoc(api, '08-mint-flows-by-status');
    expect(Object.fromEntries(flows.map((r) => [r.overall_status, Number(r.flows)]))).toEqual({
      completed: 1,
      failed: 1,
    });
    const failed = await runDoc(api, '07-failed-redemptions');
    // By the real clock (after the scenario) every unfilled, uncancelled request has expired.
    expect(failed.map((r) => `${r.vault}/${r.request_id}`).sort()).toEqual(
      [`${SLUG.alpha}/r1`, `${SLUG.alpha}/r2`, `${SLUG.alpha}/r3`, `${SLUG.beta}/b1`].sort(),
    );
    const lag = await runDoc(api, '09-chain-lag');
    // chain 1 lags (yesterday 06:00) and holds back alpha, the only vault on it
    expect(lag[0].chain_id).toBe(1);
    expect(lag[0].holds_back).toEqual([SLUG.alpha]);
  });
});
