import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenBuckets } from '../../api/http/ratelimit.ts';
import { getJson, startTestApp, type TestApp } from './app.ts';

let now = 1_000_000;
let limited: TestApp;
let open: TestApp;
beforeAll(async () => {
  limited = await startTestApp({
    api: { rateLimit: { enabled: true, rps: 1, burst: 3, header: 'x-client-id' } },
    clock: () => now,
  });
  open = await startTestApp();
});
afterAll(async () => {
  await limited.close();
  await open.close();
});

const hit = (app: TestApp, client: string, path = '/v1/vaults') =>
  getJson(`${app.url}${path}`, { headers: { 'x-client-id': client } });

describe('rate limit', () => {
  it('allows the burst, then 429 RATE_LIMITED with Retry-After and RateLimit-* headers', async () => {
    const ok = [];
    for (let i = 0; i < 3; i++) ok.push(await hit(limited, 'alice'));
    expect(ok.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(ok.map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['2', '1', '0']);
    expect(ok[0].headers.get('ratelimit-limit')).toBe('3');
    const denied = await hit(limited, 'alice');
    expect(denied.status).toBe(429);
    expect(denied.body.code).toBe('RATE_LIMITED');
    expect(denied.headers.get('retry-after')).toBe('1');
    expect(denied.headers.get('ratelimit-remaining')).toBe('0');
    expect(denied.headers.get('ratelimit-reset')).toBe('3');
    expect(denied.headers.get('ratelimit-policy')).toBe('3;w=3');
  });

  it('keys clients by the configured header; ops paths are not limited', async () => {
    expect((await hit(limited, 'bob')).status).toBe(200);
    expect((await hit(limited, 'alice')).status).toBe(429);
    expect((await hit(limited, 'alice', '/livez')).status).toBe(200);
  });

  it('refills at rps', async () => {
    now += 1000;
    expect((await hit(limited, 'alice')).status).toBe(200);
    expect((await hit(limited, 'alice')).status).toBe(429);
    now += 10_000;
    for (let i = 0; i < 3; i++) expect((await hit(limited, 'alice')).status).toBe(200);
  });

  it('is off by default', async () => {
    for (let i = 0; i < 50; i++) {
      const r = await hit(open, 'alice');
      expect(r.status).toBe(200);
      expect(r.headers.get('ratelimit-limit')).toBeNull();
    }
  });

  it('forgets the least recently seen clients beyond maxClients', () => {
    const b = new TokenBuckets(1, 1, 2);
    expect(b.take('a', 0).allowed).toBe(true);
    expect(b.take('a', 0).allowed).toBe(false);
    b.take('b', 0);
    b.take('c', 0);
    expect(b.size).toBe(2);
    expect(b.take('a', 0).allowed).toBe(true); // a was evicted, so it starts with a full bucket
  });
});
