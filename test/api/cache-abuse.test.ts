/**
 * A client cannot bypass the response cache. The key is the
 * validated query (unknown parameters ignored, canonical order, defaults applied),
 * uncached loads are bounded per client, and rate limiting is on by default for
 * everyone but loopback clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { getJson, startTestApp, type TestApp } from './app.ts';

let app: TestApp;
let bounded: TestApp;
let loopbackLimited: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  bounded = await startTestApp({ api: { cache: { maxUncachedPerClient: 2 } } });
  loopbackLimited = await startTestApp({ api: { rateLimit: { limitLoopback: true, rps: 1, burst: 2 } } });
});
afterAll(async () => {
  await app.close();
  await bounded.close();
  await loopbackLimited.close();
});

describe('cache key = the validated query', () => {
  it('random unknown parameters (`?_=<random>`) share one entry with the plain request', async () => {
    const first = await getJson(`${app.url}/v1/vaults/details`);
    expect(first.status).toBe(200);
    const size = app.kit.cache.size;
    for (let i = 0; i < 50; i++) {
      const r = await getJson(`${app.url}/v1/vaults/details?_=${Math.random()}&cb${i}=${i}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('etag')).toBe(first.headers.get('etag'));
    }
    expect(app.kit.cache.size).toBe(size);
  });

  it('spelled-out defaults, other spellings and another order share the entry', async () => {
    await getJson(`${app.url}/v1/vaults/recent-transactions`);
    const size = app.kit.cache.size;
    for (const q of [
      'limit=10',
      'status=active',
      'live=true',
      'limit=10&status=active',
      'status=active&limit=10&utm_source=x',
    ])
      expect((await getJson(`${app.url}/v1/vaults/recent-transactions?${q}`)).status).toBe(200);
    expect(app.kit.cache.size).toBe(size);
    // A real difference is a new entry.
    await getJson(`${app.url}/v1/vaults/recent-transactions?limit=11`);
    expect(app.kit.cache.size).toBe(size + 1);
  });

  it('the OpenAPI document says unknown parameters are ignored', async () => {
    const doc = (await getJson(`${app.url}/v1/openapi.json`)).body;
    expect(JSON.stringify(doc.info)).toMatch(/[Uu]nknown query parameters are ignored/);
  });
});

describe('uncached work per client is bounded', () => {
  it('at most maxUncachedPerClient loads at once per client; the rest 429 with Retry-After', async () => {
    // Each load lasts 2 s, so all six are in flight together however slowly the machine sends them.
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => getJson(`${bounded.url}/v1/test/slow?id=u${i}&ms=2000`)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429]);
    const denied = results.find((r) => r.status === 429)!;
    expect(denied.body.code).toBe('RATE_LIMITED');
    expect(denied.headers.get('retry-after')).toBe('1');
    // Cached answers and coalesced waiters never count: 20 identical requests all succeed.
    const same = await Promise.all(
      Array.from({ length: 20 }, () => getJson(`${bounded.url}/v1/test/slow?id=u0`)),
    );
    expect(same.every((r) => r.status === 200)).toBe(true);
    // The slots are released: later loads run.
    expect((await getJson(`${bounded.url}/v1/test/slow?id=later`)).status).toBe(200);
  });
});

describe('rate limiting is on by default', () => {
  it('defaults: enabled, loopback exempt', () => {
    const cfg = parseConfig({});
    expect(cfg.api.rateLimit.enabled).toBe(true);
    expect(cfg.api.rateLimit.limitLoopback).toBe(false);
  });

  it('a loopback client is not limited by default (no RateLimit headers)', async () => {
    for (let i = 0; i < 60; i++) {
      const r = await getJson(`${app.url}/v1/vaults`);
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-limit')).toBeNull();
    }
  });

  it('limitLoopback: true limits loopback clients too', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await getJson(`${loopbackLimited.url}/v1/vaults`)).status);
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses).toContain(429);
  });
});
