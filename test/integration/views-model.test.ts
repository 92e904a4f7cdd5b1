/**
 * The analyst's model: what the data team had to dig out of JSON or rebuild
 * from `transactions` is a column or a view. On the vault scenario with three Solana mint flows
 * (one completed, one waiting on its attestation, one failed): mint_flows has each flow's vault,
 * wallet, amount and current step; vault_registry the base asset's symbol beside its decimals;
 * flows_chain_daily the deposits and withdrawals per chain and day, which add up to volume_daily;
 * redemption_values each redemption request's USD value at the time it was made; chains the
 * configured chains' names (written from the config, a renamed chain replaces its row).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../core/config.ts';
import { configuredChains, writeConfigTables } from '../../views/settings.ts';
import { useApiHarness } from '../support/api-fixture.ts';
import { base58 } from '../support/events.ts';
import {
  NOW,
  PRIMARY,
  rates,
  redemptions,
  SLUG,
  vaultConfigs,
  vaultScenarioLines,
} from '../support/vault-scenario.ts';

const line = (family: string, record: unknown) => JSON.stringify({ family, record });
const step = (
  signature: string,
  name: string,
  status: string,
  at: number,
  fields: Record<string, string> = {},
) => line('mint_steps', { signature, step: name, status, observedAt: at * 1000, fields, error: '' });
const STEPS = ['solana', 'cctpAttestation', 'predicate', 'relay', 'composer', 'oft', 'solanaMint'];
const burn = (wallet: string, amount: string) => ({ vault: SLUG.alpha, wallet, amount, blockSlot: '7' });
const DONE = base58(88, 11);
const WAITING = base58(88, 12);
const FAILED = base58(88, 13);
const WALLET = [base58(44, 21), base58(44, 22), base58(44, 23)];
const extra = [
  ...STEPS.map((s, k) =>
    step(DONE, s, 'completed', NOW - 3600 + k, s === 'solana' ? burn(WALLET[0], '1500000000') : {}),
  ),
  step(WAITING, 'solana', 'completed', NOW - 900, burn(WALLET[1], '250000000')),
  step(WAITING, 'cctpAttestation', 'in_progress', NOW - 800),
  step(FAILED, 'solana', 'completed', NOW - 600, burn(WALLET[2], '99000000')),
  step(FAILED, 'cctpAttestation', 'completed', NOW - 550),
  step(FAILED, 'predicate', 'failed', NOW - 500),
];

const api = useApiHarness(() => [...vaultScenarioLines(), ...extra], NOW * 1000);

describe('the analyst model', () => {
  it('mint_flows: vault, wallet, amount and the current step of every flow', async () => {
    const rows = await api.store.query<Record<string, string>>(
      `SELECT signature, vault, wallet, toString(amount) AS amount, current_step, overall_status
       FROM ${api.store.database}.mint_flows ORDER BY signature`,
    );
    const bySig = Object.fromEntries(rows.map((r) => [r.signature, r]));
    expect(bySig[DONE]).toEqual({
      signature: DONE,
      vault: SLUG.alpha,
      wallet: WALLET[0],
      amount: '1500000000',
      current_step: '',
      overall_status: 'completed',
    });
    expect(bySig[WAITING]).toMatchObject({
      wallet: WALLET[1],
      amount: '250000000',
      current_step: 'cctpAttestation',
    });
    expect(bySig[FAILED]).toMatchObject({
      wallet: WALLET[2],
      amount: '99000000',
      current_step: 'predicate',
      overall_status: 'failed',
    });
  });

  it('vault_registry: the base asset symbol beside its decimals', async () => {
    const rows = await api.store.query<{
      slug: string;
      base_asset_symbol: string;
      base_asset_decimals: number;
    }>(
      `SELECT slug, base_asset_symbol, base_asset_decimals FROM ${api.store.database}.vault_registry ORDER BY slug`,
    );
    const alpha = rows.find((r) => r.slug === SLUG.alpha);
    expect(alpha).toMatchObject({ base_asset_symbol: 'USDC', base_asset_decimals: 6 });
    expect(rows.every((r) => r.base_asset_symbol !== '')).toBe(true);
  });

  it('flows_chain_daily: deposits and withdrawals per chain and day, adding up to volume_daily', async () => {
    const db = api.store.database;
    const perChain = await api.store.query<Record<string, string>>(
      `SELECT vault, chain_id, toString(day) AS day, deposits, withdrawals FROM ${db}.flows_chain_daily`,
    );
    // Counted here from the transactions themselves.
    const counted = await api.store.query<Record<string, string>>(
      `SELECT CAST(vault, 'String') AS vault, chain_id, toString(toDate(block_time)) AS day,
         countIf(kind = 'DEPOSIT') AS deposits, countIf(kind IN ('WITHDRAW', 'INSTANT_REDEEM')) AS withdrawals
       FROM ${db}.transactions WHERE kind IN ('DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM') GROUP BY ALL`,
    );
    const key = (r: Record<string, string>) => `${r.vault}|${r.chain_id}|${r.day}`;
    const norm = (rows: Record<string, string>[]) =>
      Object.fromEntries(rows.map((r) => [key(r), [Number(r.deposits), Number(r.withdrawals)]]));
    expect(perChain.length).toBeGreaterThan(0);
    expect(norm(perChain)).toEqual(norm(counted));
    // Summed over chains: volume_daily's counts, and its USD up to one 1e-18 truncation per chain.
    const diff = await api.store.query<Record<string, string>>(
      `SELECT v.vault AS vault, v.day AS day, v.deposits - c.deposits AS dd, v.withdrawals - c.withdrawals AS dw,
         toString(abs(v.deposits_usd_e18 - c.dep)) AS usd, c.chains AS chains
       FROM ${db}.volume_daily AS v INNER JOIN (
         SELECT vault, day, sum(deposits) AS deposits, sum(withdrawals) AS withdrawals,
           sum(deposits_usd_e18) AS dep, count() AS chains
         FROM ${db}.flows_chain_daily GROUP BY vault, day) AS c ON c.vault = v.vault AND c.day = v.day`,
    );
    expect(diff.length).toBeGreaterThan(0);
    for (const d of diff) {
      expect([Number(d.dd), Number(d.dw)], `${d.vault} ${d.day}`).toEqual([0, 0]);
      expect(BigInt(d.usd) <= BigInt(d.chains), `${d.vault} ${d.day} USD`).toBe(true);
    }
  });

  it('redemption_values: every request valued at the rate known when it was made', async () => {
    const rows = await api.store.query<Record<string, string>>(
      `SELECT vault, chain_id, request_id, toString(rate_at_request) AS rate,
         toString(value_usd_at_request_e18) AS value FROM ${api.store.database}.redemption_values`,
    );
    // Computed here from the scenario's own events: the latest REQUEST of each request, the latest
    // primary-chain rate at or before it (both vaults price on the primary chain), the configured
    // base asset price and the share decimals on the queue's chain.
    const latest = new Map<string, (typeof redemptions)[number]>();
    for (const r of redemptions.filter((x) => x.kind === 'REQUEST')) {
      const k = `${r.vault}|${r.chainId}|${r.requestId}`;
      if (!latest.has(k) || latest.get(k)!.ts <= r.ts) latest.set(k, r);
    }
    const pow10 = (n: number) => 10n ** BigInt(n);
    const e18 = (usd: number) => BigInt(Math.round(usd * 1e6)) * pow10(12);
    const want = [...latest.values()].map((r) => {
      const cfg = vaultConfigs.find((v) => v.slug === r.vault)!;
      const rate = rates
        .filter((x) => x.vault === r.vault && x.chainId === PRIMARY && x.ts <= r.ts)
        .sort((a, b) => a.ts - b.ts)
        .at(-1)!;
      const override = (cfg.decimalsOverride as Record<string, number>[] | undefined)?.find(
        (o) => o[String(r.chainId)] !== undefined,
      );
      const shareDecimals = override?.[String(r.chainId)] ?? cfg.decimals;
      const shareUsd = (rate.rate * e18(cfg.baseAsset.usdPrice)) / pow10(rate.decimals);
      return {
        vault: r.vault,
        chain_id: r.chainId,
        request_id: r.requestId,
        rate: String(rate.rate),
        value: String((shareUsd * r.amount) / pow10(shareDecimals)),
      };
    });
    const got = rows.map((r) => ({
      vault: r.vault,
      chain_id: Number(r.chain_id),
      request_id: r.request_id,
      rate: r.rate,
      value: r.value,
    }));
    const order = (a: { request_id: string }, b: { request_id: string }) =>
      a.request_id < b.request_id ? -1 : 1;
    expect(want.length).toBeGreaterThan(4);
    expect(got.sort(order)).toEqual(want.sort(order));
  });

  it('chains: the configured chains by id and name; a renamed chain replaces its row', async () => {
    const db = api.store.database;
    const read = async () =>
      (
        await api.store.query<{ chain_id: number; name: string }>(
          `SELECT chain_id, name FROM ${db}.chains FINAL ORDER BY chain_id`,
        )
      ).map((r) => ({ chainId: Number(r.chain_id), name: r.name }));
    const solana = { mintAddress: WALLET[0], oftStoreAddress: WALLET[1], composerAddress: WALLET[2] };
    const config = (primaryName: string) =>
      parseConfig({
        chains: [
          { chainId: 1, name: 'Ethereum' },
          { chainId: PRIMARY, name: primaryName },
        ],
        vaults: vaultConfigs.map((v, i) =>
          i === 0 ? { ...v, solana: { ...solana, decimals: 6, startBlock: 0 } } : v,
        ),
      });
    const byId = (a: { chainId: number }, b: { chainId: number }) => a.chainId - b.chainId;
    // The harness's `streams` run wrote its config's chains (config/default.yaml) at start.
    const started = await read();
    expect(started.length).toBeGreaterThan(1);
    expect(started).toEqual(configuredChains(loadConfig()).sort(byId));
    const first = config('Plume');
    expect(configuredChains(first)).toEqual([
      { chainId: 1, name: 'Ethereum' },
      { chainId: PRIMARY, name: 'Plume' },
      { chainId: 101, name: 'Solana' },
    ]);
    await writeConfigTables(api.store, first);
    const merged = new Map(started.map((c) => [c.chainId, c]));
    for (const c of configuredChains(first)) merged.set(c.chainId, c);
    const want = [...merged.values()].sort(byId);
    expect(await read()).toEqual(want);
    // The same config again writes nothing; a rename replaces the row and keeps one per chain.
    const count = () => api.store.query<{ n: string }>(`SELECT count() AS n FROM ${db}.chains`);
    const rowsBefore = await count();
    await writeConfigTables(api.store, first);
    expect(await count()).toEqual(rowsBefore);
    await writeConfigTables(api.store, config('Plume Mainnet'));
    expect(await read()).toEqual(
      want.map((c) => (c.chainId === PRIMARY ? { ...c, name: 'Plume Mainnet' } : c)),
    );
  });
});
