/**
 * The fast path of cached answers (api/http/fast.ts): a repeated cached request is answered
 * before Koa with exactly the status, headers and bytes Koa sent, and every rule of the cache
 * still holds: data version, TTL, eviction, time-relative keys, ETag/304, rate limit, metrics.
 */
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHttpKit } from '../../api/http/kit.ts';
import { cacheLookups, httpRequestSeconds } from '../../api/http/metrics.ts';
import { parseConfig } from '../../core/config.ts';
import { registry } from '../../core/metrics.ts';
import { startTestApp, type TestApp } from './app.ts';

type Raw = { status: number; headers: Record<string, unknown>; body: Buffer };

/** A raw request (no decompression): status, headers without `date`, body bytes. */
function raw(url: string, headers: Record<string, string> = {}, method = 'GET', agent?: Agent) {
  return new Promise<Raw>((resolve, reject) => {
    const req = request(url, { headers, method, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const { date: _date, ...rest } = res.headers;
        resolve({ status: res.statusCode!, headers: rest, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

let fast: TestApp;
let koa: TestApp;
const now = 1_700_000_000_000;
const api = { rateLimit: { enabled: true, rps: 1, burst: 3, header: 'x-client-id' } };
beforeAll(async () => {
  fast = await startTestApp({ api, clock: () => now });
  koa = await startTestApp({ api, clock: () => now, fast: false });
});
afterAll(async () => {
  await fast.close();
  await koa.close();
});

describe('fast path: the same answers as Koa', () => {
  const variants: [string, Record<string, string>, string][] = [
    ['identity', {}, 'GET'],
    ['gzip', { 'accept-encoding': 'gzip' }, 'GET'],
    ['br', { 'accept-encoding': 'gzip, deflate, br' }, 'GET'],
    ['HEAD gzip', { 'accept-encoding': 'gzip' }, 'HEAD'],
    ['small identity', {}, 'GET'],
  ];
  for (const [name, headers, method] of variants) {
    it(`${name}: status, headers and bytes equal Koa's, answered without Koa`, async () => {
      const path = name.startsWith('small') ? '/v1/vaults?status=all' : '/v1/test/big';
      const fromKoa = [];
      for (let i = 0; i < 3; i++) fromKoa.push(await raw(`${koa.url}${path}`, headers, method));
      const before = fast.kit.fast.answered;
      const fromFast = [];
      for (let i = 0; i < 3; i++) fromFast.push(await raw(`${fast.url}${path}`, headers, method));
      expect(fast.kit.fast.answered - before).toBe(2); // the first went through Koa and was recorded
      expect(fromFast).toEqual(fromKoa);
      expect(fromFast[2].status).toBe(200);
    });
  }

  it('If-None-Match: the same 304s (strong, weak, variant, list, *) and a 200 on no match', async () => {
    const path = '/v1/test/big';
    const h = { 'accept-encoding': 'gzip' };
    await raw(`${fast.url}${path}`, h);
    const etag = String((await raw(`${koa.url}${path}`, h)).headers.etag);
    expect(etag).toMatch(/-gzip"$/);
    const before = fast.kit.fast.answered;
    for (const inm of [etag, `W/${etag}`, etag.replace('-gzip', ''), `"x", ${etag}`, '*', '"other"']) {
      const a = await raw(`${fast.url}${path}`, { ...h, 'if-none-match': inm });
      const b = await raw(`${koa.url}${path}`, { ...h, 'if-none-match': inm });
      expect(a).toEqual(b);
      expect(a.status).toBe(inm === '"other"' ? 200 : 304);
    }
    expect(fast.kit.fast.answered - before).toBe(6);
  });

  it('rate limit: the same tokens, headers and 429 as Koa, per client', async () => {
    const path = '/v1/vaults?status=active';
    const seq = async (app: TestApp, client: string) => {
      const out = [];
      for (let i = 0; i < 5; i++) out.push(await raw(`${app.url}${path}`, { 'x-client-id': client }));
      return out;
    };
    const a = await seq(fast, 'carol');
    const b = await seq(koa, 'carol');
    expect(a.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
    expect(a).toEqual(b);
    expect(a.map((r) => r.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0']);
    expect(a[3].headers['retry-after']).toBe('1');
    // Another client has its own bucket, on the fast path too.
    const before = fast.kit.fast.answered;
    expect((await raw(`${fast.url}${path}`, { 'x-client-id': 'dave' })).status).toBe(200);
    expect(fast.kit.fast.answered - before).toBe(1);
  });

  it('a new data version goes through Koa and loads again', async () => {
    const url = `${fast.url}/v1/test/slow?id=fast-version`;
    await raw(url);
    await raw(url);
    expect(fast.loads.get('fast-version')).toBe(1);
    fast.bumpVersion();
    // Koa serves the previous version's answer while the new one loads (not replayed: bounded staleness).
    const during = await raw(url);
    expect(JSON.parse(during.body.toString()).data.version).toBe(1);
    expect(fast.loads.get('fast-version')).toBe(2);
    await vi.waitFor(async () => expect(JSON.parse((await raw(url)).body.toString()).data.version).toBe(2));
    const before = fast.kit.fast.answered;
    const replayed = await raw(url);
    expect(JSON.parse(replayed.body.toString()).data.version).toBe(2);
    expect(fast.kit.fast.answered).toBe(before + 1);
    expect(fast.loads.get('fast-version')).toBe(2);
  });

  it('an answer loaded under a version that moved on meanwhile is not replayed under the new one', async () => {
    const url = `${fast.url}/v1/test/slow?id=fast-race`;
    const first = raw(url); // its loader sleeps 50 ms
    await new Promise((r) => setTimeout(r, 15));
    fast.bumpVersion();
    await first; // stored under the version it started in
    await raw(url);
    expect(fast.loads.get('fast-race')).toBe(2); // the new version's own load, not the replay
  });

  it('counts its answers in the request histogram and as cache hits', async () => {
    const path = '/v1/test/slow?id=fast-metrics';
    await raw(`${fast.url}${path}`);
    const count = async () =>
      (await httpRequestSeconds.get()).values.find(
        (v) =>
          v.metricName === 'vaultstream_http_request_duration_seconds_count' &&
          v.labels.route === '/v1/test/slow' &&
          v.labels.status === '200' &&
          v.labels.method === 'GET',
      )?.value ?? 0;
    const hits = async () =>
      (await cacheLookups.get()).values.find(
        (v) => v.labels.route === '/v1/test/slow' && v.labels.result === 'hit',
      )?.value ?? 0;
    const [c0, h0, a0] = [await count(), await hits(), fast.kit.fast.answered];
    for (let i = 0; i < 4; i++) await raw(`${fast.url}${path}`);
    await new Promise((r) => setTimeout(r, 20)); // the histogram observes on 'close'
    expect(fast.kit.fast.answered - a0).toBe(4);
    expect((await count()) - c0).toBe(4);
    expect((await hits()) - h0).toBe(4);
  });

  it('its batched observations are exact in a scrape: buckets, +Inf, count and sum, 304s too', async () => {
    const path = '/v1/test/slow?id=fast-scrape';
    const etag = String((await raw(`${fast.url}${path}`)).headers.etag);
    // One series line of /metrics (0 when the series does not exist yet).
    const scrape = async () => {
      const text = await registry.metrics();
      const value = (metric: string, labels: string) =>
        Number(
          text
            .split('\n')
            .find((l) => l.startsWith(`${metric}{`) && l.includes(labels))
            ?.split(' ')
            .at(-1) ?? 0,
        );
      const series = (status: string) => {
        const labels = `method="GET",route="/v1/test/slow",status="${status}"`;
        const name = 'vaultstream_http_request_duration_seconds';
        return {
          fastest: value(`${name}_bucket`, `le="0.001",${labels}`),
          slowest: value(`${name}_bucket`, `le="10",${labels}`),
          inf: value(`${name}_bucket`, `le="+Inf",${labels}`),
          count: value(`${name}_count`, labels),
          sum: value(`${name}_sum`, labels),
        };
      };
      const hits = value('vaultstream_api_cache_lookups_total', 'route="/v1/test/slow",result="hit"');
      return { ok: series('200'), notModified: series('304'), hits };
    };
    const before = await scrape();
    const a0 = fast.kit.fast.answered;
    for (let i = 0; i < 3; i++) await raw(`${fast.url}${path}`);
    for (let i = 0; i < 2; i++)
      expect((await raw(`${fast.url}${path}`, { 'if-none-match': etag })).status).toBe(304);
    await new Promise((r) => setTimeout(r, 20));
    expect(fast.kit.fast.answered - a0).toBe(5);
    const after = await scrape();
    for (const [name, n] of [
      ['ok', 3],
      ['notModified', 2],
    ] as const) {
      const [b, a] = [before[name], after[name]];
      expect(a.count - b.count).toBe(n);
      expect(a.inf - b.inf).toBe(n);
      expect(a.slowest - b.slowest).toBe(n); // each well under 10 s
      expect(a.fastest - b.fastest).toBeLessThanOrEqual(n);
      expect(a.sum - b.sum).toBeGreaterThan(0);
      expect(a.sum - b.sum).toBeLessThan(n * 10);
    }
    expect(after.hits - before.hits).toBe(5);
    // Read twice, counted once.
    expect((await scrape()).ok.count).toBe(after.ok.count);
  });

  it('keyed by the peer address (no header): every request on one connection takes its own token', async () => {
    const byPeer = { rateLimit: { enabled: true, rps: 1, burst: 3, limitLoopback: true } };
    const apps = [
      await startTestApp({ api: byPeer, clock: () => now }),
      await startTestApp({ api: byPeer, clock: () => now, fast: false }),
    ];
    try {
      const seqs = [];
      for (const app of apps) {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        const out = [];
        for (let i = 0; i < 5; i++)
          out.push(await raw(`${app.url}/v1/vaults?status=active`, {}, 'GET', agent));
        agent.destroy();
        seqs.push(out);
      }
      expect(seqs[0].map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
      expect(seqs[0].map((r) => r.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0']);
      expect(seqs[0]).toEqual(seqs[1]);
      expect(apps[0].kit.fast.answered).toBe(2); // the second and third, from the record
    } finally {
      for (const app of apps) await app.close();
    }
  });
});

describe('fast path: time, TTL and eviction', () => {
  let url = '';
  let server: ReturnType<Koa['listen']>;
  let t = Date.UTC(2026, 0, 1, 23, 59, 58, 100);
  const calls = { today: 0, fixed: 0, loads: 0, tick: 0 };
  let tick = false;
  const kit = createHttpKit({
    // No grace after the TTL here (the stale-while-reload grace is cache.test.ts's): an expired entry is reloaded at once.
    api: parseConfig({ api: { cache: { ttlSeconds: 60, staleWhileRevalidateSeconds: 0 } } }).api,
    version: () => 1,
    clock: () => t,
  });
  beforeAll(async () => {
    const app = new Koa();
    const router = new Router();
    // A key with a time-relative default (today), read through the kit's clock as handlers do.
    router.get('/v1/today', async (ctx) => {
      calls.today++;
      const day = new Date(kit.fast.clock()).toISOString().slice(0, 10);
      await kit.respond(
        ctx,
        async () => {
          calls.loads++;
          return { body: { day } };
        },
        { key: `today ${day}` },
      );
    });
    // Reads the clock, then a second passes before the answer is sent (once, when `tick` is set).
    router.get('/v1/tick', async (ctx) => {
      calls.tick++;
      const second = Math.floor(kit.fast.clock() / 1000);
      if (tick) {
        tick = false;
        t += 1000;
      }
      await kit.respond(ctx, async () => ({ body: { second } }), { key: `tick ${second}` });
    });
    router.get('/v1/fixed', async (ctx) => {
      calls.fixed++;
      await kit.respond(ctx, async () => {
        calls.loads++;
        return { body: { fixed: calls.loads } };
      });
    });
    for (const m of kit.middleware) app.use(m);
    app.use(router.routes());
    kit.fast.install(app);
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('a key read from the clock is replayed within its second only, and moves with the day', async () => {
    const body = async () => JSON.parse((await raw(`${url}/v1/today`)).body.toString()).day;
    expect(await body()).toBe('2026-01-01');
    expect(await body()).toBe('2026-01-01');
    expect(calls).toMatchObject({ today: 1, loads: 1 }); // the second from the record
    t += 1000; // next second, same day: through Koa (a cache hit), then recorded again
    expect(await body()).toBe('2026-01-01');
    expect(await body()).toBe('2026-01-01');
    expect(calls).toMatchObject({ today: 2, loads: 1 });
    t += 1000; // next day: a new key
    expect(await body()).toBe('2026-01-02');
    expect(calls).toMatchObject({ today: 3, loads: 2 });
  });

  it("a record is valid in the second of the handler's clock read, not the second it was sent in", async () => {
    const get = async () => JSON.parse((await raw(`${url}/v1/tick`)).body.toString()).second;
    tick = true;
    const s0 = await get(); // read at s0, sent at s0 + 1
    expect(await get()).toBe(s0 + 1); // through Koa: the record of s0 does not answer s0 + 1
    expect(await get()).toBe(s0 + 1); // the record of s0 + 1
    expect(calls.tick).toBe(2);
  });

  it('an expired entry is not replayed (TTL), nor an evicted one', async () => {
    const get = () => raw(`${url}/v1/fixed`);
    await get();
    await get();
    const { fixed, loads } = calls;
    t += 30_000;
    await get();
    expect(calls).toMatchObject({ fixed, loads });
    t += 31_000; // past the 60 s TTL: Koa, and a new load
    await get();
    expect(calls).toMatchObject({ fixed: fixed + 1, loads: loads + 1 });
    await get();
    expect(calls.fixed).toBe(fixed + 1);
    expect(kit.fast.size).toBeGreaterThan(0);
    kit.cache.clear();
    expect(kit.fast.size).toBe(0);
    await get();
    expect(calls).toMatchObject({ fixed: fixed + 2, loads: loads + 2 });
  });
});
