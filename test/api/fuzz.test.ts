/**
 * Fuzz test: random query strings, path segments and bodies against
 * every route; whatever the input, the answer is never a 5xx and never leaks a
 * stack trace. Seeded, so a failure replays; bounded to a fixed number of cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../api/http/endpoints.ts';
import { objectOf } from '../../api/http/params.ts';
import { HOSTILE_REQUESTS } from '../support/api-hostile.ts';
import { rawRequest } from '../support/api-raw.ts';
import { seededRandom } from '../support/rng.ts';
import { startTestApp, type TestApp } from './app.ts';

const ITERATIONS = 2000;
const BODY_ITERATIONS = 300;
const SEED = 0x5eed_2024;

const prng = seededRandom;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ api: { bodyLimitBytes: 4096 } });
});
afterAll(() => app.close());

const KNOWN = [...new Set(ENDPOINTS.flatMap((e) => Object.keys(objectOf(e.query)?.shape ?? {})))];
const NAMES = [
  ...KNOWN,
  'x',
  '',
  '__proto__',
  'constructor',
  'limit[]',
  'a[b]',
  '%ff',
  'slug%00',
  'status.x',
];
const VALUES = [
  '',
  '0',
  '1',
  '-1',
  '10',
  '100',
  '101',
  '1.5',
  '1e3',
  '0x10',
  'NaN',
  'Infinity',
  '9'.repeat(400),
  '-9'.repeat(30),
  'true',
  'false',
  'TRUE',
  'null',
  'asc',
  'desc',
  'csv',
  'all',
  'active',
  'hidden',
  '2024-02-29',
  '2023-02-29',
  '9999-99-99',
  `0x${'a'.repeat(40)}`,
  '0x',
  '%ff%fe',
  '%',
  '%zz',
  '%00',
  '%E2%82%AC',
  '%ED%A0%80',
  '%C0%AF',
  '%2F..%2F..',
  '[]',
  '{}',
  '%7B%22a%22%3A1%7D',
  "'%20OR%201=1--",
  'x'.repeat(3000),
];
const SEGMENTS = [
  'alpha',
  '%ff',
  '%ff%fe',
  '%00',
  '..%2F',
  'a'.repeat(500),
  '5'.repeat(64),
  '%E2%82%AC',
  '-',
  '_',
];

const forbidden = /\n\s+at |node_modules|\.ts:\d|TypeError|ReferenceError/;

function randomQuery(rand: () => number): string {
  const n = Math.floor(rand() * 6);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = NAMES[Math.floor(rand() * NAMES.length)];
    const value = VALUES[Math.floor(rand() * VALUES.length)];
    parts.push(rand() < 0.1 ? name : `${name}=${value}`);
    if (rand() < 0.15) parts.push(`${name}=${VALUES[Math.floor(rand() * VALUES.length)]}`); // repeated
  }
  return parts.join('&');
}

function randomPath(rand: () => number): string {
  const e = ENDPOINTS[Math.floor(rand() * ENDPOINTS.length)];
  return e.path.replace(/\{\w+\}/g, () => SEGMENTS[Math.floor(rand() * SEGMENTS.length)]);
}

function randomJson(rand: () => number, depth = 0): unknown {
  const pick = Math.floor(rand() * 9);
  if (depth > 3) return rand();
  switch (pick) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return [98866, 1, 0, -1, 1.5, 1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER][Math.floor(rand() * 8)];
    case 3:
      return VALUES[Math.floor(rand() * VALUES.length)];
    case 4:
      return Array.from({ length: Math.floor(rand() * 4) }, () => randomJson(rand, depth + 1));
    default: {
      const keys = ['chainId', 'user', 'enabled', 'skipSimulation', 'extra', '__proto__', 'constructor'];
      const o: Record<string, unknown> = {};
      for (const k of keys) if (rand() < 0.6) o[k] = randomJson(rand, depth + 1);
      return o;
    }
  }
}

function randomBody(rand: () => number): { body: string; type: string } {
  const r = rand();
  const types = [
    'application/json',
    'application/json; charset=latin1',
    'text/plain',
    'application/x-www-form-urlencoded',
    '',
  ];
  const type = r < 0.8 ? 'application/json' : types[Math.floor(rand() * types.length)];
  if (r < 0.55) return { body: JSON.stringify(randomJson(rand)), type };
  if (r < 0.65)
    return { body: JSON.stringify({ pad: 'x'.repeat(5000 + Math.floor(rand() * 50_000)) }), type };
  if (r < 0.75) return { body: '{"chainId": 1, "user": ', type };
  if (r < 0.85) return { body: '\uFFFD\u0000\uD800'.repeat(Math.floor(rand() * 100)), type };
  return { body: JSON.stringify(randomJson(rand)).slice(0, Math.floor(rand() * 40)), type };
}

async function expectSafe(res: Response, what: string): Promise<void> {
  const text = await res.text();
  expect(res.status, `${what} -> ${res.status} ${text.slice(0, 200)}`).toBeLessThan(500);
  expect(text, what).not.toMatch(forbidden);
  if (res.status >= 400) {
    const body = JSON.parse(text);
    expect(typeof body.error, what).toBe('string');
    expect(typeof body.code, what).toBe('string');
  }
}

/** Runs `tasks` with at most `width` in flight. */
async function pool<T>(tasks: (() => Promise<T>)[], width: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) await tasks[next++]();
    }),
  );
}

describe('fuzz: never a 5xx', () => {
  it(`${ITERATIONS} random GET query strings and path segments`, async () => {
    const rand = prng(SEED);
    const cases = Array.from({ length: ITERATIONS }, () => `/v1${randomPath(rand)}?${randomQuery(rand)}`);
    const statuses = new Map<number, number>();
    await pool(
      cases.map((c) => async () => {
        const res = await fetch(`${app.url}${c}`);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        await expectSafe(res, `GET ${c}`);
      }),
      8,
    );
    // Both outcomes occur: the generator is not stuck on valid or on invalid input.
    expect(statuses.get(200)).toBeGreaterThan(50);
    expect(statuses.get(400)).toBeGreaterThan(50);
  });

  it('hostile negotiation, body encodings and methods: JSON 4xx on every route', async () => {
    const rand = prng(SEED + 2);
    const paths = ENDPOINTS.map((e) => `/v1${e.path.replace(/\{\w+\}/g, 'nest-alpha')}`);
    const cases = HOSTILE_REQUESTS.flatMap((h) =>
      [h.path, paths[Math.floor(rand() * paths.length)], '/docs', '/v1/openapi.json'].map((path) => ({
        ...h,
        path,
      })),
    );
    for (const method of ['TRACE', 'PROPFIND', 'MKCOL', 'PURGE', 'LINK'])
      for (const path of paths)
        cases.push({ what: method, method, path, status: 405, code: 'METHOD_NOT_ALLOWED' });
    const seen = new Set<number>();
    await pool(
      cases.map((c) => async () => {
        const res = await rawRequest(`${app.url}${c.path}`, {
          method: c.method,
          headers: c.headers,
          body: c.body,
        });
        const what = `${c.method} ${c.path} ${JSON.stringify(c.headers ?? {})}`;
        seen.add(res.status);
        // The one 5xx allowed: a method nobody implements on a path nobody serves, as JSON.
        if (res.status === 501) expect([c.path, res.json?.code]).toEqual(['/v1/nope', 'NOT_IMPLEMENTED']);
        else expect(res.status, `${what} -> ${res.status} ${res.text.slice(0, 200)}`).toBeLessThan(500);
        expect(res.text, what).not.toMatch(forbidden);
        if (res.status >= 400) {
          expect(typeof res.json?.error, what).toBe('string');
          expect(typeof res.json?.code, what).toBe('string');
        }
        if (c.method !== 'GET' && c.method !== 'POST')
          expect(res.status, what).toBe(c.path === '/v1/nope' ? 501 : 405);
      }),
      8,
    );
    expect([...seen].sort()).toEqual(expect.arrayContaining([400, 405, 406, 415]));
  });

  it(`${BODY_ITERATIONS} random bodies to POST /auto-claim/build-tx`, async () => {
    const rand = prng(SEED + 1);
    const cases = Array.from({ length: BODY_ITERATIONS }, () => randomBody(rand));
    await pool(
      cases.map((c) => async () => {
        const headers: Record<string, string> = c.type ? { 'content-type': c.type } : {};
        const res = await fetch(`${app.url}/v1/auto-claim/build-tx?${randomQuery(rand)}`, {
          method: 'POST',
          headers,
          body: c.body,
        });
        await expectSafe(res, `POST ${c.type} ${c.body.slice(0, 80)}`);
      }),
      8,
    );
  });
});
