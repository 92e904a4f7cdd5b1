import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../api/http/errors.ts';
import {
  makeFailedRedemptionsQuery,
  makeFeesQuery,
  parsePath,
  parseQuery,
  selectedStatuses,
  slugPath,
  yearsBefore,
} from '../../api/http/params.ts';
import { getJson, startTestApp, type TestApp } from './app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const SIG = '5'.repeat(64);
const USER = `0x${'a'.repeat(40)}`;

/** [description, path?query, the parameter the 400 must name] */
const BAD_QUERIES: [string, string, string][] = [
  ['status not in the list', '/vaults?status=live', 'status'],
  ['status empty', '/vaults/details?status=', 'status'],
  ['live not a boolean', '/vaults?live=yes', 'live'],
  ['live upper case', '/vaults/holders?live=TRUE', 'live'],
  ['live as a number', '/vaults/apy-history?live=1', 'live'],
  ['liveLiquidity not a boolean', '/vaults/details?liveLiquidity=1', 'liveLiquidity'],
  ['liveLiquidity on details-lite', '/vaults/alpha/details-lite?liveLiquidity=maybe', 'liveLiquidity'],
  ['startDate not a number', '/vaults/alpha/performance-history?startDate=abc', 'startDate'],
  ['startDate negative', '/vaults/alpha/performance-history?startDate=-1', 'startDate'],
  ['startDate fractional', '/vaults/apy-history?startDate=1.5', 'startDate'],
  ['startDate with exponent', '/vaults/apy-history?startDate=1e9', 'startDate'],
  ['startDate huge', `/vaults/holders-history?startDate=${'9'.repeat(40)}`, 'startDate'],
  ['startDate past 2106', '/vaults/alpha/holders-history?startDate=4294967296', 'startDate'],
  ['endDate hex', '/vaults/alpha/holders-history?endDate=0x10', 'endDate'],
  ['endDate with spaces', '/vaults/alpha/failed-redemptions?endDate=%2012', 'endDate'],
  [
    'start after end (performance)',
    '/vaults/alpha/performance-history?startDate=200&endDate=100',
    'startDate',
  ],
  ['start after end (apy)', '/vaults/apy-history?startDate=200&endDate=100', 'startDate'],
  ['start after end (holders)', '/vaults/alpha/holders-history?startDate=200&endDate=100', 'startDate'],
  ['start after end (all holders)', '/vaults/holders-history?startDate=200&endDate=100', 'startDate'],
  ['start after end (failed)', '/vaults/alpha/failed-redemptions?startDate=200&endDate=100', 'startDate'],
  ['order unknown', '/vaults/alpha/performance-history?order=up', 'order'],
  ['order upper case', '/vaults/apy-history?order=ASC', 'order'],
  [
    'includeCompositeAssets not a boolean',
    '/vaults/alpha/performance-history?includeCompositeAssets=yes',
    'includeCompositeAssets',
  ],
  ['format unknown', '/vaults/alpha/performance-history?format=xml', 'format'],
  ['chainId zero', '/vaults/apy-history?chainId=0', 'chainId'],
  ['chainId negative', '/vaults/recent-transactions?chainId=-5', 'chainId'],
  ['chainId not a number', '/vaults/holders?chainId=eth', 'chainId'],
  ['chainId past UInt32', '/vaults/alpha/failed-redemptions?chainId=4294967296', 'chainId'],
  ['limit zero', '/vaults/recent-transactions?limit=0', 'limit'],
  ['limit above 100', '/vaults/recent-transactions?limit=101', 'limit'],
  ['limit fractional', '/vaults/recent-transactions?limit=2.5', 'limit'],
  ['limit empty', '/vaults/recent-transactions?limit=', 'limit'],
  ['user without 0x', '/vaults/alpha/failed-redemptions?user=abcdef', 'user'],
  ['user 0x only', '/vaults/alpha/failed-redemptions?user=0x', 'user'],
  ['user not hex', '/vaults/alpha/failed-redemptions?user=0xZZ', 'user'],
  ['queueAddress not hex', '/vaults/alpha/failed-redemptions?queueAddress=0xg1', 'queueAddress'],
  ['fees startDate not a calendar day', '/vaults/fees?startDate=2023-02-29', 'startDate'],
  ['fees startDate month 13', '/vaults/fees?startDate=2024-13-01', 'startDate'],
  ['fees endDate 31 April', '/vaults/fees?endDate=2024-04-31', 'endDate'],
  ['fees endDate without dashes', '/vaults/fees?endDate=20240101', 'endDate'],
  ['fees endDate as Unix seconds', '/vaults/fees?endDate=1714564800', 'endDate'],
  ['fees start after end', '/vaults/fees?startDate=2024-05-02&endDate=2024-05-01', 'startDate'],
  ['fees start after default end', '/vaults/fees?startDate=2999-01-01', 'startDate'],
  ['fees empty slug', '/vaults/fees?slug=', 'slug'],
  ['fees one empty slug among others', '/vaults/fees?slug=a&slug=', 'slug'],
  ['signature too short', '/solana/mint-status/abc', 'signature'],
  ['signature too long', `/solana/mint-status/${'5'.repeat(89)}`, 'signature'],
  ['signature not base58 (0, O, I, l)', `/solana/mint-status/${'0OIl'.repeat(16)}`, 'signature'],
  ['repeated limit', '/vaults/recent-transactions?limit=1&limit=2', 'limit'],
  ['repeated status', '/vaults?status=active&status=all', 'status'],
  ['repeated live', '/vaults?live=true&live=false', 'live'],
  ['repeated startDate', '/vaults/apy-history?startDate=1&startDate=2', 'startDate'],
  ['repeated order', '/vaults/alpha/performance-history?order=asc&order=asc', 'order'],
  ['repeated user', `/vaults/alpha/failed-redemptions?user=${USER}&user=${USER}`, 'user'],
  ['repeated fees endDate', '/vaults/fees?endDate=2024-01-01&endDate=2024-01-02', 'endDate'],
  [
    'repeated liveLiquidity',
    '/vaults/alpha/details-lite?liveLiquidity=true&liveLiquidity=true',
    'liveLiquidity',
  ],
];

describe('bad query and path parameters: 400 naming the parameter', () => {
  it.each(BAD_QUERIES)('%s', async (_what, pathAndQuery, param) => {
    const { status, body, headers } = await getJson(`${app.url}/v1${pathAndQuery}`);
    expect(status).toBe(400);
    expect(body.code).toBe('BAD_PARAMETER');
    expect(body.error).toContain(param);
    const named = body.details.map((d: { path: string }) => d.path.split('.')[0]);
    expect(named).toContain(param);
    for (const d of body.details) expect(typeof d.message).toBe('string');
    expect(headers.get('cache-control')).toBe('no-store');
  });

  it('lists every bad parameter in one answer', async () => {
    const { status, body } = await getJson(
      `${app.url}/v1/vaults/alpha/performance-history?order=up&format=xml&startDate=x&includeCompositeAssets=1`,
    );
    expect(status).toBe(400);
    expect(body.details.map((d: { path: string }) => d.path).sort()).toEqual(
      ['format', 'includeCompositeAssets', 'order', 'startDate'].sort(),
    );
    expect(body.details.every((d: { in: string }) => d.in === 'query')).toBe(true);
  });

  it('slug: an empty slug is a 400 naming it; no route matches an empty path segment (404)', async () => {
    expect(() => parsePath(slugPath, { params: { slug: '' } })).toThrow(ApiError);
    try {
      parsePath(slugPath, { params: { slug: '' } });
    } catch (err) {
      expect((err as ApiError).status).toBe(400);
      expect((err as ApiError).details).toEqual([
        { in: 'path', path: 'slug', message: 'expected a vault slug' },
      ]);
    }
    const { status, body } = await getJson(`${app.url}/v1/vaults//details-lite`);
    expect(status).toBe(404);
    expect(body.code).toBe('NOT_FOUND');
  });
});

describe('accepted parameters and their defaults', () => {
  const q = async (path: string) => {
    const { status, body } = await getJson(`${app.url}/v1${path}`);
    expect(status).toBe(200);
    return body.data.query;
  };

  it('status / live: status wins, live=true active, live=false every non-active, default active', async () => {
    expect((await q('/vaults')).statuses).toEqual(['active']);
    expect((await q('/vaults?live=true')).statuses).toEqual(['active']);
    expect((await q('/vaults?live=false')).statuses).toEqual(['disabled', 'coming_soon', 'hidden']);
    expect((await q('/vaults?status=all')).statuses).toEqual(['active', 'disabled', 'coming_soon', 'hidden']);
    expect((await q('/vaults?status=hidden&live=true')).statuses).toEqual(['hidden']);
    expect((await q('/vaults/holders?status=coming_soon&live=false')).statuses).toEqual(['coming_soon']);
    expect(selectedStatuses({ live: false, status: 'active' })).toEqual(['active']);
  });

  it('details: liveLiquidity defaults to false', async () => {
    expect(await q('/vaults/details')).toEqual({ liveLiquidity: false, statuses: ['active'] });
    expect(await q('/vaults/alpha/details-lite?liveLiquidity=true')).toEqual({ liveLiquidity: true });
  });

  it('performance-history: order desc, includeCompositeAssets false, format json by default', async () => {
    expect(await q('/vaults/alpha/performance-history')).toEqual({
      order: 'desc',
      includeCompositeAssets: false,
      format: 'json',
    });
    expect(
      await q(
        '/vaults/alpha/performance-history?startDate=0&endDate=0&order=asc&includeCompositeAssets=true&format=csv',
      ),
    ).toEqual({ startDate: 0, endDate: 0, order: 'asc', includeCompositeAssets: true, format: 'csv' });
  });

  it('apy-history: chainId defaults to 98866; recent-transactions: limit 10, bounds 1 and 100 accepted', async () => {
    expect(await q('/vaults/apy-history')).toMatchObject({
      chainId: 98866,
      order: 'desc',
      statuses: ['active'],
    });
    expect(await q('/vaults/recent-transactions')).toEqual({ limit: 10, statuses: ['active'] });
    expect((await q('/vaults/recent-transactions?limit=1&chainId=8453')).limit).toBe(1);
    expect((await q('/vaults/recent-transactions?limit=100')).limit).toBe(100);
    expect((await q('/vaults/recent-transactions?limit=007')).limit).toBe(7);
  });

  it('roles-assignments: legacy limit and cursor are accepted (even repeated or malformed) and ignored', async () => {
    expect(await q('/vaults/alpha/roles-assignments?limit=abc&limit=5&cursor=zzz')).toEqual({});
  });

  it('fees: slug is repeatable; unknown parameters are ignored', async () => {
    const r = await q('/vaults/fees?slug=a&slug=b&startDate=2024-02-29&endDate=2024-03-01&other=1&other=2');
    expect(r).toEqual({ slug: ['a', 'b'], startDate: '2024-02-29', endDate: '2024-03-01' });
    expect((await q('/vaults/fees?slug=a')).slug).toEqual(['a']);
  });

  it('failed-redemptions: addresses pass the pattern and are lower-cased', async () => {
    const r = await q(`/vaults/alpha/failed-redemptions?user=0xABCdef&queueAddress=0xFF&chainId=1&endDate=5`);
    expect(r).toMatchObject({ user: '0xabcdef', queueAddress: '0xff', chainId: 1, endDate: 5 });
  });

  it('mint-status: a base58 signature of 64 to 88 characters', async () => {
    expect((await getJson(`${app.url}/v1/solana/mint-status/${SIG}`)).body.data.params).toEqual({
      signature: SIG,
    });
    const long = '3'.repeat(88);
    expect((await getJson(`${app.url}/v1/solana/mint-status/${long}`)).status).toBe(200);
  });
});

describe('time-relative defaults (clock injected)', () => {
  const at = (iso: string) => () => Date.parse(iso);

  it('failed-redemptions: startDate defaults to 30 days before now', () => {
    const schema = makeFailedRedemptionsQuery(at('2024-05-31T10:00:00Z'));
    const r = parseQuery(schema, { query: {} });
    expect(r.startDate).toBe(Date.parse('2024-05-01T10:00:00Z') / 1000);
    expect(parseQuery(schema, { query: { startDate: '7' } }).startDate).toBe(7);
  });

  it('fees: endDate defaults to today (UTC), startDate to one calendar year before endDate', () => {
    const schema = makeFeesQuery(at('2024-05-31T23:59:59Z'));
    expect(parseQuery(schema, { query: {} })).toEqual({
      slug: undefined,
      startDate: '2023-05-31',
      endDate: '2024-05-31',
    });
    expect(parseQuery(schema, { query: { endDate: '2024-02-29' } }).startDate).toBe('2023-02-28');
    expect(parseQuery(schema, { query: { startDate: '2020-01-01' } })).toMatchObject({
      startDate: '2020-01-01',
      endDate: '2024-05-31',
    });
    expect(yearsBefore('2025-03-01', 1)).toBe('2024-03-01');
  });
});
