/**
 * GET /v1/vaults/{slug}/performance-history (JSON and CSV) and GET
 * /v1/vaults/apy-history over the vault scenario replayed through the CLI into
 * chDB. Expected values are computed here from the scenario's events
 * (test/support/vault-scenario.ts): closes, supply, snapshots, watermarks.
 */
import { describe, expect, it } from 'vitest';
import { responseBodies } from '../../api/http/responses.ts';
import { loadSourceErrors } from '../../api/read/history-apy.ts';
import { parseConfig } from '../../core/config.ts';
import { useVaultApi } from '../support/api-fixture.ts';
import { DAY } from '../support/events.ts';
import { dayTs, errors, MAINNET, NOW, PRIMARY, SLUG, TODAY } from '../support/vault-scenario.ts';
import {
  truthClose,
  truthComposition,
  truthCompositionApy,
  truthLiquid,
  truthNavApy,
  truthSettledThrough,
  truthTvl,
} from '../support/vault-truth.ts';

const api = useVaultApi();
const get = api.get;

type Block = { rolling7d: number | null; rolling30d: number | null; sec30d: number | null };

function near(actual: number | null, expected: number | null, rel = 1e-9) {
  if (expected === null) return expect(actual).toBeNull();
  expect(actual).not.toBeNull();
  expect(Math.abs((actual as number) - expected)).toBeLessThanOrEqual(Math.abs(expected) * rel + 1e-9);
}
function nearBlock(actual: Block | null, expected: Block) {
  expect(actual).not.toBeNull();
  near((actual as Block).rolling7d, expected.rolling7d);
  near((actual as Block).rolling30d, expected.rolling30d);
  near((actual as Block).sec30d, expected.sec30d);
}

/** The export holds numbers, dates and slugs only: no quoting to undo. */
const parse = (csv: string) =>
  csv
    .trimEnd()
    .split('\n')
    .map((line) => line.split(','));

const indexOf = (day: number) => (day - dayTs(0)) / DAY;
const dayEnd = (i: number) => Math.min(dayTs(i) + DAY - 1, NOW);
/** Days settled for a vault: their end is at or before its oldest chain watermark. */
const settled = (slug: string, i: number) => dayTs(i) + DAY <= truthSettledThrough(slug);

describe('GET /v1/vaults/{slug}/performance-history', () => {
  it('has one entry per day, newest first, with price, tvl and liquid funds of each day', async () => {
    const { body } = await get(`/v1/vaults/${SLUG.alpha}/performance-history`);
    responseBodies['GET /vaults/{slug}/performance-history'].parse(body);
    const { data } = body;
    expect(data.vaultAddress).toBe('0x00000000000000000000000000000000000000a1');
    expect(data.assets).toEqual([
      { slug: 'tbill', name: 'Treasury Bills' },
      { slug: 'credit', name: 'Private Credit' },
    ]);
    expect(data.history.map((e: { day: number }) => indexOf(e.day))).toEqual(
      Array.from({ length: TODAY + 1 }, (_, k) => TODAY - k),
    );
    for (const e of data.history) {
      const i = indexOf(e.day);
      near(e.vault.price, truthClose(SLUG.alpha, PRIMARY, i) as number);
      near(e.vault.tvl, truthTvl(SLUG.alpha, i));
      near(e.vault.liquidFunds, truthLiquid(SLUG.alpha, dayEnd(i)));
      expect(e.assets).toEqual({});
    }
    // A day without a rate update carries the previous close.
    const day3 = data.history.find((e: { day: number }) => e.day === dayTs(3));
    expect(day3.vault.price).toBe(data.history.find((e: { day: number }) => e.day === dayTs(2)).vault.price);
  });

  it('nulls apy and navApy on today and on unsettled days, and computes them on settled ones', async () => {
    const { data } = (await get(`/v1/vaults/${SLUG.alpha}/performance-history?order=asc`)).body;
    expect(indexOf(data.history[0].day)).toBe(0);
    const today = data.history.at(-1);
    expect(indexOf(today.day)).toBe(TODAY);
    expect(today.vault.price).toBeGreaterThan(0);
    expect(today.vault.apy).toBeNull();
    expect(today.vault.navApy).toBeNull();
    // Chain 1 is ingested only to yesterday 06:00: yesterday is not settled either.
    expect(settled(SLUG.alpha, TODAY - 1)).toBe(false);
    expect(data.history.at(-2).vault.navApy).toBeNull();
    expect(data.history.at(-2).vault.apy).toBeNull();
    for (const e of data.history.slice(0, -2)) {
      const i = indexOf(e.day);
      expect(settled(SLUG.alpha, i)).toBe(true);
      nearBlock(e.vault.navApy, truthNavApy(SLUG.alpha, PRIMARY, i));
      nearBlock(e.vault.apy, truthCompositionApy(SLUG.alpha, dayEnd(i)));
    }
    // Early days lack the history for 7 or 30 days back.
    expect(data.history[5].vault.navApy.rolling7d).toBeNull();
    expect(data.history[8].vault.navApy.rolling7d).not.toBeNull();
    expect(data.history[8].vault.navApy.rolling30d).toBeNull();
  });

  it('limits to the days overlapping startDate..endDate', async () => {
    const q = `startDate=${dayTs(10) + 500}&endDate=${dayTs(12) + 1}&order=asc`;
    const { data } = (await get(`/v1/vaults/${SLUG.alpha}/performance-history?${q}`)).body;
    expect(data.history.map((e: { day: number }) => indexOf(e.day))).toEqual([10, 11, 12]);
    const none = (await get(`/v1/vaults/${SLUG.alpha}/performance-history?endDate=${dayTs(0) - 1}`)).body;
    expect(none.data.history).toEqual([]);
  });

  it('includes the yield assets of each day with includeCompositeAssets=true', async () => {
    const { data } = (
      await get(`/v1/vaults/${SLUG.alpha}/performance-history?includeCompositeAssets=true&order=asc`)
    ).body;
    for (const e of data.history) {
      const i = indexOf(e.day);
      const expected = truthComposition(SLUG.alpha, dayEnd(i));
      expect(Object.keys(e.assets).sort()).toEqual(Object.keys(expected).sort());
      expect(e.assets).not.toHaveProperty('usdc');
      for (const [slug, a] of Object.entries(expected)) {
        near(e.assets[slug].price, a.price);
        near(e.assets[slug].apy7d, a.apy7d);
        near(e.assets[slug].apy30d, a.apy30d);
        near(e.assets[slug].compositionPct, a.compositionPct);
      }
    }
    // Credit has no price of its own in the composition: its ASSET_PRICE snapshot (1.5, then 1.52 from day 21).
    expect(data.history[20].assets.credit.price).toBe(1.5);
    expect(data.history[21].assets.credit.price).toBe(1.52);
  });

  it('exports CSV: a header row and one row per day, asset groups when included', async () => {
    const res = await get(
      `/v1/vaults/${SLUG.alpha}/performance-history?format=csv&includeCompositeAssets=true`,
    );
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows: string[][] = parse(res.text);
    const asset = (s: string) => ['price', 'apy7d', 'apy30d', 'compositionPct'].map((m) => `${s}_${m}`);
    const apy = (p: string) => ['rolling7d', 'rolling30d', 'sec30d'].map((m) => `${p}_${m}`);
    expect(rows[0]).toEqual([
      'day',
      'date',
      'price',
      'tvl',
      'liquidFunds',
      ...apy('apy'),
      ...apy('navApy'),
      ...asset('tbill'),
      ...asset('credit'),
    ]);
    expect(rows).toHaveLength(TODAY + 2);
    const [today, , settledDay] = rows.slice(1);
    expect(today.slice(0, 2)).toEqual([String(dayTs(TODAY)), '2026-10-15']);
    near(Number(today[2]), truthClose(SLUG.alpha, PRIMARY, TODAY) as number);
    expect(today.slice(5, 11)).toEqual(['', '', '', '', '', '']);
    expect(settledDay[1]).toBe('2026-10-13');
    near(Number(settledDay[3]), truthTvl(SLUG.alpha, TODAY - 2));
    near(Number(settledDay[8]), truthNavApy(SLUG.alpha, PRIMARY, TODAY - 2).rolling7d);
    near(Number(settledDay[11]), truthComposition(SLUG.alpha, dayEnd(TODAY - 2)).tbill.price);

    const plain = await get(`/v1/vaults/${SLUG.alpha}/performance-history?format=csv&order=asc`);
    const plainRows: string[][] = parse(plain.text);
    expect(plainRows[0]).toHaveLength(11);
    expect(plainRows[1][1]).toBe('2026-09-01');
  });

  it('answers 404 for an unknown slug and 400 naming a bad parameter', async () => {
    expect((await api.request('/v1/vaults/nope/performance-history')).status).toBe(404);
    for (const [q, param] of [
      ['order=up', 'order'],
      ['format=xml', 'format'],
      [`startDate=${dayTs(5)}&endDate=${dayTs(4)}`, 'startDate'],
      ['includeCompositeAssets=1', 'includeCompositeAssets'],
    ]) {
      const res = await api.request(`/v1/vaults/${SLUG.alpha}/performance-history?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toContain(param);
    }
  });
});

describe('GET /v1/vaults/apy-history', () => {
  it('answers only settled days, today omitted, with navApy, compositionApy and its alias apy', async () => {
    const { body } = await get('/v1/vaults/apy-history');
    responseBodies['GET /vaults/apy-history'].parse(body);
    expect(body.data).toHaveLength(1);
    const alpha = body.data[0];
    expect(alpha.vaultAddress).toBe('0x00000000000000000000000000000000000000a1');
    const days = alpha.history.map((e: { day: number }) => indexOf(e.day));
    // Settled through the day before yesterday (chain 1 lags), newest first.
    expect(days).toEqual(Array.from({ length: TODAY - 1 }, (_, k) => TODAY - 2 - k));
    for (const e of alpha.history) {
      const i = indexOf(e.day);
      nearBlock(e.navApy, truthNavApy(SLUG.alpha, PRIMARY, i));
      nearBlock(e.compositionApy, truthCompositionApy(SLUG.alpha, dayEnd(i)));
      expect(e.apy).toEqual(e.compositionApy);
    }
  });

  it('reports the vault data-source errors in the range', async () => {
    const all = (await get('/v1/vaults/apy-history')).body.data[0];
    const expected = errors
      .filter((e) => e.vault === SLUG.alpha)
      .sort((a, b) => b.ts - a.ts)
      .map((e) => ({
        source: e.source,
        operation: e.operation,
        message: e.message,
        code: e.code,
        timestamp: e.ts,
      }));
    expect(all.errors).toEqual(expected);
    expect(all.errorsTotal).toBe(expected.length);
    expect(all.errors.map((e: { code: string }) => e.code)).toContain('TIMEOUT');

    const from30 = (await get(`/v1/vaults/apy-history?startDate=${dayTs(30)}&order=asc`)).body.data[0];
    expect(from30.errors).toEqual(expected.filter((e) => e.timestamp >= dayTs(30)));
    expect(from30.history.map((e: { day: number }) => indexOf(e.day))).toEqual(
      Array.from({ length: TODAY - 2 - 30 + 1 }, (_, k) => 30 + k),
    );
  });

  it('bounds the error list to the most recent N per vault, with the total count', async () => {
    const mine = errors.filter((e) => e.vault === SLUG.alpha).sort((a, b) => b.ts - a.ts);
    expect(mine.length).toBeGreaterThan(1);
    for (const order of ['desc', 'asc'] as const) {
      const got = (await loadSourceErrors(api.store, [SLUG.alpha], 0, NOW, order, 1)).get(SLUG.alpha)!;
      expect(got.total).toBe(mine.length);
      const recent = mine.slice(0, 1).map((e) => e.ts);
      expect(got.errors.map((e) => e.timestamp)).toEqual(order === 'desc' ? recent : [...recent].reverse());
    }
    // The default bound, from the config.
    expect(parseConfig({}).api.maxSourceErrorsPerVault).toBe(100);
  });

  it('orders errors of the same second by source and operation, either way the time goes', async () => {
    // A vault of its own (no other test reads it): three errors in one second, one a second later.
    const vault = 'same-second-errors';
    const t = NOW - 3600;
    await api.store.command(
      `INSERT INTO ${api.store.database}.source_errors_raw (vault, chain_id, source, operation, message, code, ts)
       VALUES ('${vault}', 0, 'rpc:1', 'getLogs', 'm', 'TIMEOUT', toDateTime(${t})),
              ('${vault}', 0, 'attestation', 'fetch', 'm', 'TIMEOUT', toDateTime(${t})),
              ('${vault}', 0, 'rpc:1', 'blockNumber', 'm', 'TIMEOUT', toDateTime(${t})),
              ('${vault}', 0, 'rpc:56', 'getLogs', 'm', 'TIMEOUT', toDateTime(${t + 1}))`,
    );
    const keys = async (order: 'asc' | 'desc', limit = 100) =>
      (await loadSourceErrors(api.store, [vault], 0, NOW, order, limit))
        .get(vault)
        ?.errors.map((e) => `${e.timestamp - t} ${e.source} ${e.operation}`);
    const sameSecond = ['0 attestation fetch', '0 rpc:1 blockNumber', '0 rpc:1 getLogs'];
    expect(await keys('desc')).toEqual(['1 rpc:56 getLogs', ...sameSecond]);
    expect(await keys('asc')).toEqual([...sameSecond, '1 rpc:56 getLogs']);
    // The bound keeps the most recent, then orders them.
    expect(await keys('asc', 2)).toEqual(['0 attestation fetch', '1 rpc:56 getLogs']);
  });

  it('prices navApy on the requested chain', async () => {
    const alpha = (await get(`/v1/vaults/apy-history?chainId=${MAINNET}&order=asc`)).body.data[0];
    for (const e of alpha.history) nearBlock(e.navApy, truthNavApy(SLUG.alpha, MAINNET, indexOf(e.day)));
    // Chain 1's first rate is on day 1: day 0 has no price there at all.
    expect(alpha.history[0].navApy).toEqual({ rolling7d: null, rolling30d: null, sec30d: null });
  });

  it('settles each vault by its own chains and filters by status', async () => {
    const { data } = (await get(`/v1/vaults/apy-history?status=all&endDate=${NOW}`)).body;
    expect(data.map((v: { vaultAddress: string }) => v.vaultAddress)).toEqual([
      '0x00000000000000000000000000000000000000a1',
      '0x00000000000000000000000000000000000000b1',
      '0x00000000000000000000000000000000000000c1',
    ]);
    const [alpha, beta, gamma] = data;
    expect(indexOf(alpha.history[0].day)).toBe(TODAY - 2);
    // Beta and gamma live on the primary chain only, ingested to a minute ago: yesterday is settled, today is not.
    expect(indexOf(beta.history[0].day)).toBe(TODAY - 1);
    expect(indexOf(gamma.history[0].day)).toBe(TODAY - 1);
    expect(indexOf(gamma.history.at(-1).day)).toBe(10);
    nearBlock(gamma.history[0].navApy, truthNavApy(SLUG.gamma, PRIMARY, TODAY - 1));
    expect(gamma.history[0].compositionApy).toEqual({ rolling7d: null, rolling30d: null, sec30d: null });
    expect(beta.errors.map((e: { code: string }) => e.code)).toEqual(['RATE_LIMITED']);
    expect(gamma.errors).toEqual([]);
  });

  it('rejects a bad chainId with a 400 naming it', async () => {
    const res = await api.request('/v1/vaults/apy-history?chainId=abc');
    expect(res.status).toBe(400);
    expect(res.body.details[0].path).toBe('chainId');
  });
});
