import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError, toApiError } from '../../api/http/errors.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { HOSTILE_REQUESTS } from '../support/api-hostile.ts';
import { rawRequest } from '../support/api-raw.ts';
import { getJson, startTestApp, type TestApp } from './app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ api: { bodyLimitBytes: 1024 } });
});
afterAll(() => app.close());

const USER = `0x${'aB'.repeat(20)}`;
const GOOD = { chainId: 98866, user: USER, enabled: true };

function post(body: string, contentType = 'application/json') {
  return getJson(`${app.url}/v1/auto-claim/build-tx`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
}

/** [description, JSON body, the field the 400 must name] */
const BAD_BODIES: [string, unknown, string][] = [
  ['chainId missing', { user: USER, enabled: true }, 'chainId'],
  ['chainId unsupported', { ...GOOD, chainId: 2 }, 'chainId'],
  ['chainId zero', { ...GOOD, chainId: 0 }, 'chainId'],
  ['chainId negative', { ...GOOD, chainId: -1 }, 'chainId'],
  ['chainId as a string', { ...GOOD, chainId: '1' }, 'chainId'],
  ['chainId fractional', { ...GOOD, chainId: 1.5 }, 'chainId'],
  ['user missing', { chainId: 1, enabled: true }, 'user'],
  ['user 39 hex digits', { ...GOOD, user: `0x${'a'.repeat(39)}` }, 'user'],
  ['user 41 hex digits', { ...GOOD, user: `0x${'a'.repeat(41)}` }, 'user'],
  ['user without 0x', { ...GOOD, user: 'a'.repeat(42) }, 'user'],
  ['user as a number', { ...GOOD, user: 12 }, 'user'],
  ['enabled missing', { chainId: 1, user: USER }, 'enabled'],
  ['enabled as a string', { ...GOOD, enabled: 'true' }, 'enabled'],
  ['enabled null', { ...GOOD, enabled: null }, 'enabled'],
  ['skipSimulation as a string', { ...GOOD, skipSimulation: 'no' }, 'skipSimulation'],
  ['unknown key', { ...GOOD, gas: 1 }, 'gas'],
  ['body is an array', [GOOD], 'body'],
];

describe('POST /auto-claim/build-tx body: 400 BAD_BODY naming the field', () => {
  it.each(BAD_BODIES)('%s', async (_what, body, field) => {
    const res = await post(JSON.stringify(body));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_BODY');
    const named = res.body.details.map((d: { path: string }) => d.path);
    expect(named.join(' ')).toContain(field);
    expect(res.body.details.every((d: { in: string }) => d.in === 'body')).toBe(true);
  });

  it('accepts a valid body; skipSimulation defaults to false', async () => {
    const res = await post(JSON.stringify(GOOD));
    expect(res.status).toBe(200);
    expect(res.body.data.body).toEqual({ ...GOOD, skipSimulation: false });
    for (const chainId of [98866, 1, 8453, 56, 9745, 43114])
      expect((await post(JSON.stringify({ ...GOOD, chainId, skipSimulation: true }))).status).toBe(200);
  });

  it.each([
    ['invalid JSON', '{"chainId": 1,', 'application/json'],
    ['a JSON scalar', '"hello"', 'application/json'],
    ['JSON null', 'null', 'application/json'],
    ['prototype pollution', '{"__proto__": {"x": 1}}', 'application/json'],
    ['empty body', '', 'application/json'],
    ['oversized body', JSON.stringify({ ...GOOD, pad: 'x'.repeat(5000) }), 'application/json'],
    ['form body', 'chainId=1', 'application/x-www-form-urlencoded'],
    ['text body', JSON.stringify(GOOD), 'text/plain'],
  ])('%s: 400 BAD_BODY, no stack', async (_what, body, type) => {
    const res = await post(body, type);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_BODY');
    expect(JSON.stringify(res.body)).not.toMatch(/\n\s+at |node_modules|\.ts:\d/);
  });

  it('oversized body names the limit', async () => {
    const res = await post(JSON.stringify({ pad: 'x'.repeat(5000) }));
    expect(res.body.error).toContain('1024');
  });
});

describe('hostile negotiation, encodings and methods are JSON 4xx', () => {
  it.each(HOSTILE_REQUESTS.map((r) => [r.what, r] as const))('%s', async (_what, r) => {
    const res = await rawRequest(`${app.url}${r.path}`, {
      method: r.method,
      headers: r.headers,
      body: r.body,
    });
    expect(res.status, res.text.slice(0, 300)).toBe(r.status);
    expect(String(res.headers['content-type'])).toMatch(/application\/json/);
    expect(res.json).toMatchObject({ code: r.code });
    expect(typeof res.json.error).toBe('string');
    expect(res.text).not.toMatch(/\bat .*\.(ts|js):\d+/);
    if (r.status === 405) expect(String(res.headers.allow)).toContain('GET');
  });

  it('a gzip body that is gzip is still accepted', async () => {
    const res = await rawRequest(`${app.url}/v1/auto-claim/build-tx`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(GOOD)),
    });
    expect(res.status).toBe(200);
    expect(res.json.data.body).toMatchObject({ chainId: 98866, enabled: true });
  });

  it('identity refused but gzip accepted: a large body is sent gzip', async () => {
    const res = await rawRequest(`${app.url}/v1/test/big`, {
      headers: { 'accept-encoding': 'identity;q=0, gzip' },
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
  });
});

describe('error mapping', () => {
  it('unknown route: 404 JSON', async () => {
    const res = await getJson(`${app.url}/v1/nope`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'no route for GET /v1/nope', code: 'NOT_FOUND' });
  });

  it('wrong method: 405 JSON with Allow', async () => {
    const res = await getJson(`${app.url}/v1/vaults`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toContain('GET');
  });

  it.each([
    ['internal', 500, 'INTERNAL', 'internal error'],
    ['string', 500, 'INTERNAL', 'internal error'],
    ['store-down', 503, 'UPSTREAM_UNAVAILABLE', 'a data source is unavailable; retry later'],
    ['not-found', 404, 'NOT_FOUND', 'unknown vault: nope'],
    ['reverted', 422, 'SIMULATION_REVERTED', 'execution reverted: NotAuthorized()'],
  ])('%s -> %i %s, message only', async (kind, status, code, error) => {
    const res = await getJson(`${app.url}/v1/test/throw/${kind}`);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error, code });
  });

  it('a failed loader under the cache is a 503, and is not cached', async () => {
    const first = await getJson(`${app.url}/v1/test/slow?id=fail`);
    expect(first.status).toBe(503);
    expect(first.body.code).toBe('UPSTREAM_UNAVAILABLE');
    await getJson(`${app.url}/v1/test/slow?id=fail`);
    expect(app.loads.get('fail')).toBe(2);
  });

  it('GET /token-holders keeps `{ error: string }` on 500 (plus code), nothing internal leaks', async () => {
    const res = await getJson(`${app.url}/v1/token-holders?fail=1`);
    expect(res.status).toBe(500);
    expect(typeof res.body.error).toBe('string');
    expect(Object.keys(res.body).sort()).toEqual(['code', 'error']);
    expect(JSON.stringify(res.body)).not.toContain('secret');
  });

  it('toApiError maps zod, core and HTTP errors', () => {
    const zerr = z.object({ a: z.string() }).safeParse({}).error!;
    expect(toApiError(zerr)).toMatchObject({ status: 400, code: 'BAD_PARAMETER' });
    expect(toApiError(new VaultstreamError('BAD_INPUT', 'x'))).toMatchObject({ status: 400 });
    expect(toApiError(new VaultstreamError('TIMEOUT', 'x'))).toMatchObject({ status: 503 });
    expect(toApiError(new VaultstreamError('STORE_QUERY_FAILED', 'x'))).toMatchObject({ status: 500 });
    const tooLarge = Object.assign(new Error('request entity too large'), {
      status: 413,
      type: 'entity.too.large',
    });
    expect(toApiError(tooLarge)).toMatchObject({ status: 400, code: 'BAD_BODY' });
    const http5xx = Object.assign(new Error('x'), { status: 502, expose: false });
    expect(toApiError(http5xx)).toMatchObject({ status: 500, code: 'INTERNAL' });
    expect(toApiError(new ApiError('RATE_LIMITED', 'slow down')).status).toBe(429);
  });
});
