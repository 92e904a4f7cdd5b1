/**
 * The fast path (api/http/fast.ts) while data lands: once a new data version's answer is being
 * computed, the previous version's answer is replayed before Koa, with the status, headers and
 * bytes Koa sends for it, counted as `previous`, and only within the staleness bound
 * (`api.cache.maxStaleMs`); the request that starts the computation, and every one past the
 * bound, goes through Koa. Loads are gated by the test, so nothing depends on timing.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpKit } from '../../api/http/kit.ts';
import { cacheLookups } from '../../api/http/metrics.ts';
import { parseConfig } from '../../core/config.ts';

type Raw = { status: number; headers: Record<string, unknown>; body: Buffer };

/** A raw request: status, headers without `date`, body bytes. */
function raw(url: string, headers: Record<string, string> = {}) {
  return new Promise<Raw>((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const { date: _date, ...rest } = res.headers;
        resolve({ status: res.statusCode as number, headers: rest, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

let url = '';
let server: ReturnType<Koa['listen']>;
let version = 1;
let t = Date.UTC(2026, 0, 1, 12);
let handled = 0;
let loads = 0;
/** Each load waits for its gate's release (by the test). */
let release: () => void = () => {};
let gate: Promise<void> = Promise.resolve();
const hold = () => {
  gate = new Promise<void>((r) => {
    release = r;
  });
};
const kit = createHttpKit({
  api: parseConfig({ api: { cache: { maxStaleMs: 2000 } } }).api,
  version: () => version,
  clock: () => t,
});

beforeAll(async () => {
  const app = new Koa();
  const router = new Router();
  router.get('/v1/answer', async (ctx) => {
    handled++;
    await kit.respond(ctx, async () => {
      loads++;
      const v = version;
      await gate;
      return { body: { v, rows: Array.from({ length: 200 }, (_, i) => i) }, watermark: 1_700_000_000 + v };
    });
  });
  for (const m of kit.middleware) app.use(m);
  app.use(router.routes());
  kit.fast.install(app);
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/answer`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function previousCount(): Promise<number> {
  const v = (await cacheLookups.get()).values.find(
    (x) => x.labels.route === '/v1/answer' && x.labels.result === 'previous',
  );
  return v?.value ?? 0;
}

const body = (r: Raw) => JSON.parse(r.body.toString()) as { v: number };

describe('fast path: the previous answer while the new one is computed', () => {
  it('is replayed before Koa, as Koa sends it, counted as previous; the new answer once it lands', async () => {
    await raw(url);
    await raw(url); // recorded, then replayed
    expect({ handled, loads }).toEqual({ handled: 1, loads: 1 });
    const prev0 = await previousCount();
    hold();
    version = 2;
    const viaKoa = await raw(url); // starts the one background load, answers the previous version
    expect({ handled, loads }).toEqual({ handled: 2, loads: 2 });
    const answered = kit.fast.answered;
    const replayed = [await raw(url), await raw(url), await raw(url)];
    expect(kit.fast.answered - answered, 'answered before Koa').toBe(3);
    expect({ handled, loads }).toEqual({ handled: 2, loads: 2 });
    for (const r of replayed) {
      expect(r.status).toBe(200);
      expect(r.headers).toEqual(viaKoa.headers);
      expect(r.body.equals(viaKoa.body)).toBe(true);
      expect(body(r).v).toBe(1);
    }
    expect(viaKoa.headers['x-data-watermark']).toBe(new Date(1_700_000_001_000).toISOString());
    // A matching If-None-Match: the same 304 as Koa's.
    const etag = String(viaKoa.headers.etag);
    const notModified = await raw(url, { 'if-none-match': etag });
    expect(notModified.status).toBe(304);
    expect(handled).toBe(2);
    expect((await previousCount()) - prev0).toBe(5); // Koa's, three replays, the 304
    release();
    await gate;
    await new Promise((r) => setTimeout(r, 10)); // the load stores its answer
    const fresh = await raw(url); // Koa: a hit of version 2, recorded
    const again = await raw(url); // replayed
    expect([body(fresh).v, body(again).v]).toEqual([2, 2]);
    expect({ handled, loads }).toEqual({ handled: 3, loads: 2 });
  });

  it('past the staleness bound it is not replayed: Koa waits for the new answer', async () => {
    await raw(url);
    hold();
    version = 3;
    const first = raw(url); // Koa: starts the background load, answers version 2
    expect(body(await first).v).toBe(2);
    await raw(url); // replayed
    const h = handled;
    t += 2001; // version 2 was last current more than maxStaleMs ago
    const waiting = raw(url);
    await new Promise((r) => setTimeout(r, 20));
    expect(handled, 'through Koa').toBe(h + 1);
    release();
    expect(body(await waiting).v).toBe(3);
    expect(loads).toBe(3);
  });

  it('an answer that was never current when asked for is recorded when served as previous, and replayed', async () => {
    t += 10_000;
    await raw(url); // Koa: version 3's answer, now current
    await raw(url); // replayed
    hold();
    version = 4;
    expect(body(await raw(url)).v).toBe(3); // Koa: starts version 4's load
    version = 5; // moves on while version 4's answer is computed
    expect(body(await raw(url)).v).toBe(3); // replayed: version 4's load still runs
    const gate4 = gate;
    const release4 = release;
    hold(); // version 5's load will wait
    release4();
    await gate4;
    await new Promise((r) => setTimeout(r, 10)); // version 4's answer is stored (it was never current)
    const h = handled;
    expect(body(await raw(url)).v).toBe(4); // Koa: version 4's answer as previous, starts version 5's load
    expect(handled).toBe(h + 1);
    const answered = kit.fast.answered;
    const replayed = await raw(url);
    expect(body(replayed).v).toBe(4);
    expect(kit.fast.answered - answered, 'replayed before Koa').toBe(1);
    expect(handled).toBe(h + 1);
    release();
    await gate;
  });
});
