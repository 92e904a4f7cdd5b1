/**
 * The vault resources' numbers against their documented SQL: what the parity suites
 * (test/integration/views-parity*.test.ts) check, on the exact path and on the head's.
 */
import { expect } from 'vitest';
import type { ApiFixture } from './api-fixture.ts';
import { runDoc } from './doc-queries.ts';

/** The same double (null for null/undefined). */
export function same(actual: unknown, expected: unknown, what: string): void {
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  expect(num(actual), what).toBe(num(expected));
}

const DETAIL_NUMBERS = [
  'tvl',
  'tvl30DayChange',
  'volume24h',
  'tokenPrice',
  'tokenPriceUpdatedAtEpoch',
  'liquidFunds',
  'liquidFundsRange',
  'holders',
] as const;

/**
 * Every number details, details-lite, /vaults and /vaults/{slug} answer for `slug` equals
 * docs/queries/api-vault-numbers.sql at `now`. Returns that row and how many numbers were compared
 * (33 per vault).
 */
export async function expectVaultNumbers(
  api: ApiFixture,
  slug: string,
  now: number,
): Promise<{ row: Record<string, any>; compared: number }> {
  const [row] = await runDoc(api, 'api-vault-numbers', { slug, now });
  expect(row, slug).toBeDefined();
  const bySlug = (list: { slug: string }[]) => list.find((v) => v.slug === slug) as Record<string, any>;
  const details = bySlug((await api.get('/v1/vaults/details?status=all')).body.data);
  const info = bySlug((await api.get('/v1/vaults?status=all')).body.data);
  const lite = (await api.get(`/v1/vaults/${slug}/details-lite`)).body.data;
  const single = (await api.get(`/v1/vaults/${slug}`)).body.data;
  let compared = 0;
  for (const [name, body] of [
    ['details', details],
    ['details-lite', lite],
  ] as const) {
    for (const f of DETAIL_NUMBERS) same(body[f], row[f], `${slug} ${name} ${f}`);
    for (const m of ['rolling7d', 'rolling30d', 'sec30d'])
      same(body.apy?.[m] ?? null, row[`apy_${m}`], `${slug} ${name} apy.${m}`);
    compared += DETAIL_NUMBERS.length + 3;
  }
  for (const f of ['pendingRedemptions', 'pendingRedemptionsValue', 'shortfall'])
    same(details[f], row[f], `${slug} details ${f}`);
  for (const [name, body] of [
    ['vaults', info],
    ['vaults/{slug}', single],
  ] as const) {
    same(body.tvl, row.tvl, `${slug} ${name} tvl`);
    same(body.volume24h, row.volume24h, `${slug} ${name} volume24h`);
    same(body.numHolders, row.holders, `${slug} ${name} numHolders`);
    same(body.sec30d, row.apy_sec30d ?? 0, `${slug} ${name} sec30d`);
  }
  return { row, compared: compared + 3 + 8 };
}
