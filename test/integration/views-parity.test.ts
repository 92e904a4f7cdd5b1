/**
 * Every number the vault endpoints serve equals a documented SQL query over the
 * metric views of migration 008 (docs/queries/api-*.sql, run here as written), on the vault
 * scenario the API tests replay (fees: views-parity-fees.test.ts), over every vault,
 * chain and day. Values are compared with `toBe` (the same IEEE double). (Before the API
 * read the views, its SEC 30-day members used V8's pow and differed from the engine's in
 * the last bits; since the API reads nav_apy_daily and composition_apy_daily they are equal.)
 */
import { describe, expect, it } from 'vitest';
import { useVaultApi } from '../support/api-fixture.ts';
import { runDoc } from '../support/doc-queries.ts';
import { DAY } from '../support/events.ts';
import { expectVaultNumbers, same } from '../support/vault-numbers.ts';
import { MAINNET, NOW, PRIMARY, SLUG } from '../support/vault-scenario.ts';

const vaultApi = useVaultApi();

const SLUGS = [SLUG.alpha, SLUG.beta, SLUG.gamma];
const APY = ['rolling7d', 'rolling30d', 'sec30d'] as const;

function sameBlock(
  actual: Record<string, number | null> | null,
  row: Record<string, any>,
  prefix: string,
  what: string,
) {
  if (row[`${prefix}_rolling7d`] === undefined) throw new Error(`no ${prefix}_* columns`);
  for (const m of APY) same(actual?.[m] ?? null, row[`${prefix}_${m}`], `${what} ${prefix}.${m}`);
}

describe('views parity: vault endpoints = docs/queries over the views', () => {
  it('details, details-lite and the vaults list: every number of every vault', async () => {
    let compared = 0;
    for (const slug of SLUGS) compared += (await expectVaultNumbers(vaultApi, slug, NOW)).compared;
    // The scenario has what makes these numbers non-trivial.
    const [alpha] = await runDoc(vaultApi, 'api-vault-numbers', { slug: SLUG.alpha, now: NOW });
    for (const f of [
      'tvl',
      'tvl30DayChange',
      'volume24h',
      'liquidFunds',
      'pendingRedemptionsValue',
      'apy_sec30d',
    ])
      expect(Number(alpha[f]), f).not.toBe(0);
    expect(compared).toBe(3 * 33);
    // liquidFundsRange and shortfall (vault_liquidity_daily): beta's open request exceeds its liquid funds.
    const [beta] = await runDoc(vaultApi, 'api-vault-numbers', { slug: SLUG.beta, now: NOW });
    for (const f of ['liquidFundsRange', 'shortfall'])
      expect(Number(beta[f]), `beta ${f}`).toBeGreaterThan(0);
    expect(Number(alpha.liquidFundsRange)).toBeGreaterThan(0);
  });

  it('vaults/holders: every top holder of every vault (balance, holderSince, totalHolders)', async () => {
    const items = (await vaultApi.get('/v1/vaults/holders?status=all')).body.data;
    let n = 0;
    for (const slug of SLUGS) {
      const rows = await runDoc(vaultApi, 'api-vault-holders', { slug });
      const item = items.find((h: { vaultAddress: string }) => h.vaultAddress === vaultAddressOf(slug));
      expect(item, slug).toBeDefined();
      expect(item.holders.length, slug).toBe(rows.length);
      same(item.totalHolders, rows[0]?.totalHolders ?? 0, `${slug} totalHolders`);
      for (const [i, h] of item.holders.entries())
        for (const f of ['chainId', 'balance', 'holderSince']) {
          same(h[f], rows[i][f], `${slug} #${i} ${f}`);
          expect(h.user, `${slug} #${i} user`).toBe(rows[i].user);
          n++;
        }
    }
    expect(n).toBeGreaterThan(8 * 3);
  });

  it('token-holders: every row, balance and USD value', async () => {
    const rows = await runDoc(vaultApi, 'api-token-holders');
    const { holders, count } = (await vaultApi.get('/v1/token-holders')).body.data;
    expect(holders.length).toBe(rows.length);
    expect(count).toBe(rows.length);
    for (const [i, h] of holders.entries()) {
      expect(h.address, `#${i} address`).toBe(rows[i].address);
      expect(h.tokenAddress, `#${i} tokenAddress`).toBe(rows[i].tokenAddress);
      same(h.balance, rows[i].balance, `#${i} balance`);
      same(h.value, rows[i].value, `#${i} value`);
    }
    expect(rows.length).toBeGreaterThanOrEqual(8);
    expect(rows.filter((r) => Number(r.value) > 0).length).toBeGreaterThanOrEqual(8);
  });

  it('performance-history: price, tvl, liquidFunds, apy and navApy of every day, and the assets', async () => {
    for (const slug of SLUGS) {
      const rows = await runDoc(vaultApi, 'api-performance-history', { slug, now: NOW });
      const assets = await runDoc(vaultApi, 'api-performance-assets', { slug, now: NOW });
      const { history } = (
        await vaultApi.get(`/v1/vaults/${slug}/performance-history?order=asc&includeCompositeAssets=true`)
      ).body.data;
      expect(
        history.map((e: { day: number }) => e.day),
        slug,
      ).toEqual(rows.map((r) => Number(r.day)));
      for (const [i, e] of history.entries()) {
        const r = rows[i];
        const what = `${slug} day ${new Date(e.day * 1000).toISOString().slice(0, 10)}`;
        for (const f of ['price', 'tvl', 'liquidFunds']) same(e.vault[f], r[f], `${what} ${f}`);
        if (Number(r.settled)) {
          sameBlock(e.vault.apy, r, 'apy', what);
          sameBlock(e.vault.navApy, r, 'navApy', what);
        } else {
          expect(e.vault.apy, what).toBeNull();
          expect(e.vault.navApy, what).toBeNull();
        }
        const mine = assets.filter((a) => Number(a.day) === e.day);
        expect(Object.keys(e.assets), what).toEqual(mine.map((a) => a.slug));
        for (const a of mine)
          for (const f of ['price', 'apy7d', 'apy30d', 'compositionPct'])
            same(e.assets[a.slug][f], a[f], `${what} ${a.slug}.${f}`);
      }
      if (slug === SLUG.alpha) {
        expect(history.length).toBe(45);
        expect(assets.length).toBeGreaterThan(80);
        expect(rows.filter((r) => r.navApy_sec30d !== null).length).toBeGreaterThan(5);
      }
    }
  });

  it('apy-history: compositionApy and navApy of every settled day, on every chain', async () => {
    let days = 0;
    for (const chainId of [PRIMARY, MAINNET])
      for (const slug of SLUGS) {
        const rows = await runDoc(vaultApi, 'api-apy-history', { slug, now: NOW, chainId });
        const item = (
          await vaultApi.get(`/v1/vaults/apy-history?status=all&order=asc&chainId=${chainId}`)
        ).body.data.find((h: { vaultAddress: string }) => h.vaultAddress === vaultAddressOf(slug));
        expect(item, slug).toBeDefined();
        expect(
          item.history.map((h: { day: number }) => h.day),
          `${slug} ${chainId}`,
        ).toEqual(rows.map((r) => Number(r.day)));
        for (const [i, h] of item.history.entries()) {
          const what = `${slug} chain ${chainId} day ${h.day}`;
          sameBlock(h.compositionApy, rows[i], 'compositionApy', what);
          sameBlock(h.apy, rows[i], 'compositionApy', `${what} (apy)`);
          sameBlock(h.navApy, rows[i], 'navApy', what);
          days++;
        }
      }
    expect(days).toBeGreaterThan(80);
  });

  it('holders-history: every vault, chain and day', async () => {
    const from = NOW - 60 * DAY;
    let n = 0;
    for (const slug of SLUGS) {
      const rows = await runDoc(vaultApi, 'api-holders-history', { slug, from, to: NOW });
      const { history } = (
        await vaultApi.get(`/v1/vaults/${slug}/holders-history?startDate=${from}&endDate=${NOW}`)
      ).body.data;
      expect(history.length, slug).toBe(rows.length);
      for (const [i, h] of history.entries())
        for (const f of ['day', 'chainId', 'start', 'end', 'min', 'max', 'average', 'count']) {
          same(h[f], rows[i][f], `${slug} ${h.day} ${h.chainId} ${f}`);
          n++;
        }
    }
    expect(n).toBeGreaterThan(8 * 40);
  });
});

const ADDRESSES: Record<string, string> = {
  [SLUG.alpha]: '0x00000000000000000000000000000000000000a1',
  [SLUG.beta]: '0x00000000000000000000000000000000000000b1',
  [SLUG.gamma]: '0x00000000000000000000000000000000000000c1',
};
const vaultAddressOf = (slug: string) => ADDRESSES[slug];
