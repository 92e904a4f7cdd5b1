import { request } from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ResponseCache } from '../../api/http/cache.ts';
import type { CacheEntry } from '../../api/http/cache-entry.ts';
import { normalizeQuery } from '../../api/http/cache-respond.ts';
import { toCsv } from '../../api/http/csv.ts';
import { etagMatches, pickEncoding } from '../../api/http/encoding.ts';
import { getJson, startTestApp, type TestApp, WATERMARK } from './app.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ api: { cache: { maxAgeSeconds: 7, staleWhileRevalidateSeconds: 45 } } });
});
afterAll(() => app.close());

/** A raw GET (no automatic decompression) returning status, headers and body bytes. */
function rawGet(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
    (resolve, reject) => {
      const req = request(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('response cache over HTTP', () => {
  it('single flight: 100 concurrent identical requests run the loader once', async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, () => getJson(`${app.url}/v1/test/slow?id=burst`)),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(app.loads.get('burst')).toBe(1);
    await getJson(`${app.url}/v1/test/slow?id=burst`);
    expect(app.loads.get('burst')).toBe(1);
  });

  it('a new data version is a new key; equal queries in another order share one', async () => {
    await getJson(`${app.url}/v1/test/slow?id=ver&a=1&b=2`);
    await getJson(`${app.url}/v1/test/slow?b=2&id=ver&a=1`);
    expect(app.loads.get('ver')).toBe(1);
    app.bumpVersion();
    // The previous version's answer while the new one loads in the background (cache-versions.test.ts).
    const during = await getJson(`${app.url}/v1/test/slow?id=ver&a=1&b=2`);
    expect(during.body.data.version).toBe(1);
    expect(app.loads.get('ver')).toBe(2);
    await vi.waitFor(async () =>
      expect((await getJson(`${app.url}/v1/test/slow?id=ver&a=1&b=2`)).body.data.version).toBeGreaterThan(1),
    );
    expect(app.loads.get('ver')).toBe(2);
  });

  it('ETag and 304 on If-None-Match (strong, weak, list, *)', async () => {
    const first = await getJson(`${app.url}/v1/vaults?status=all`);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await fetch(`${app.url}/v1/vaults?status=all`, { headers: { 'if-none-match': inm } });
      expect(res.status).toBe(304);
      expect(await res.text()).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
    }
    const other = await fetch(`${app.url}/v1/vaults?status=all`, { headers: { 'if-none-match': '"nope"' } });
    expect(other.status).toBe(200);
  });

  it('Cache-Control, Vary and the data watermark header', async () => {
    const res = await getJson(`${app.url}/v1/vaults/details`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=7, stale-while-revalidate=45');
    expect(res.headers.get('vary')).toContain('Accept-Encoding');
    expect(res.headers.get('x-data-watermark')).toBe(WATERMARK);
    const slow = await getJson(`${app.url}/v1/test/slow?id=wm`);
    expect(slow.headers.get('x-data-watermark')).toBe('2024-05-01T12:00:00.000Z');
  });

  it.each([
    ['gzip', (b: Buffer) => zlib.gunzipSync(b)],
    ['br', (b: Buffer) => zlib.brotliDecompressSync(b)],
  ])('%s content-encoding with a per-encoding ETag that still validates', async (enc, decode) => {
    const plain = await rawGet(`${app.url}/v1/test/big`, { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    const res = await rawGet(`${app.url}/v1/test/big`, { 'accept-encoding': enc });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(enc);
    expect(res.body.length).toBeLessThan(plain.body.length / 3);
    expect(decode(res.body).equals(plain.body)).toBe(true);
    expect(res.headers.etag).toBe(`${String(plain.headers.etag).slice(0, -1)}-${enc}"`);
    const again = await rawGet(`${app.url}/v1/test/big`, {
      'accept-encoding': enc,
      'if-none-match': String(res.headers.etag),
    });
    expect(again.status).toBe(304);
  });

  it('prefers br when both are accepted; small bodies stay uncompressed', async () => {
    const both = await rawGet(`${app.url}/v1/test/big`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(both.headers['content-encoding']).toBe('br');
    const small = await rawGet(`${app.url}/v1/vaults`, { 'accept-encoding': 'gzip, br' });
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('compression middleware covers uncached responses (the OpenAPI document, the docs assets)', async () => {
    const res = await rawGet(`${app.url}/v1/openapi.json`, { 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(zlib.gunzipSync(res.body).toString()).openapi).toMatch(/^3\.1/);
    const ui = await rawGet(`${app.url}/docs/assets/swagger-ui-bundle.js`, { 'accept-encoding': 'gzip' });
    expect(ui.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(ui.body).toString()).toContain('SwaggerUIBundle');
  });
});

describe('ResponseCache', () => {
  const json = (n: number) => async () => ({ body: { n, pad: 'x'.repeat(80) } });

  it('bounds its bytes, evicting the least recently used', async () => {
    const cache = new ResponseCache({ version: () => 1, maxBytes: 200 });
    await cache.get('r', 'a', json(1));
    await cache.get('r', 'b', json(2));
    await cache.get('r', 'a', json(1)); // a is now the most recent
    await cache.get('r', 'c', json(3));
    expect(cache.bytes).toBeLessThanOrEqual(200);
    expect((await cache.get('r', 'a', json(1))).result).toBe('hit');
    expect((await cache.get('r', 'b', json(2))).result).toBe('miss');
  });

  it("touch (the fast path's hit) moves an entry to the LRU end, touched twice in a row too", async () => {
    const cache = new ResponseCache({ version: () => 1, maxBytes: 200 }); // two entries fit
    const held = (e: { full: string; entry: CacheEntry }) => cache.holds(e.full, e.entry, 0);
    const a = await cache.get('r', 'a', json(1));
    const b = await cache.get('r', 'b', json(2));
    cache.touch(a.full, a.entry);
    cache.touch(a.full, a.entry);
    const c = await cache.get('r', 'c', json(3)); // evicts b, the least recently used
    expect([held(a), held(b), held(c)]).toEqual([true, false, true]);
    cache.touch(a.full, a.entry); // a after c again (c was stored after a's last touch)
    cache.touch(a.full, a.entry);
    const d = await cache.get('r', 'd', json(4)); // evicts c
    expect([held(a), held(c), held(d)]).toEqual([true, false, true]);
  });

  it('counts compressed variants in its bytes', async () => {
    const cache = new ResponseCache({ version: () => 1 });
    const { entry } = await cache.get('r', 'k', async () => ({ body: 'y'.repeat(5000) }));
    const before = cache.bytes;
    await cache.encode(entry, 'gzip');
    await new Promise((r) => setImmediate(r));
    expect(cache.bytes).toBeGreaterThan(before);
  });

  it('expires entries after ttl; a failed load rejects every waiter and is not stored', async () => {
    let now = 0;
    const cache = new ResponseCache({ version: () => 1, ttlMs: 1000, clock: () => now });
    await cache.get('r', 'k', json(1));
    now = 999;
    expect((await cache.get('r', 'k', json(1))).result).toBe('hit');
    now = 1000;
    expect((await cache.get('r', 'k', json(1))).result).toBe('miss');
    let calls = 0;
    const failing = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 10));
      throw new Error('down');
    };
    const waits = await Promise.allSettled([cache.get('r', 'f', failing), cache.get('r', 'f', failing)]);
    expect(waits.map((w) => w.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    expect(cache.size).toBe(1);
  });

  it('within its grace an expired entry is served while one reload replaces it; past the grace a request waits', async () => {
    let now = 0;
    const removed: number[] = [];
    const cache = new ResponseCache({
      version: () => 1,
      ttlMs: 1000,
      staleMs: 500,
      clock: () => now,
      onRemove: (e) => removed.push(JSON.parse(e.body.toString())),
    });
    let loads = 0;
    let release!: () => void;
    const gate = () => new Promise<void>((r) => (release = r));
    const slow = async () => {
      loads++;
      if (loads > 1) await gate();
      return { body: loads };
    };
    await cache.get('r', 'k', slow);
    now = 1200; // expired, within the grace
    const a = await cache.get('r', 'k', slow);
    const b = await cache.get('r', 'k', slow);
    expect([a.result, b.result]).toEqual(['stale', 'stale']);
    expect(JSON.parse(a.entry.body.toString())).toBe(1);
    expect(loads).toBe(2); // one reload for both
    release();
    await new Promise((r) => setImmediate(r));
    const c = await cache.get('r', 'k', slow);
    expect(c.result).toBe('hit');
    expect(JSON.parse(c.entry.body.toString())).toBe(2);
    expect(removed).toEqual([1]); // the stale entry left when its reload was stored
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(c.entry.bytes);
    now = 1200 + 1000 + 500; // past ttl and grace of the reloaded entry (stored at 1200)
    const d = cache.get('r', 'k', slow);
    await new Promise((r) => setImmediate(r));
    release();
    expect((await d).result).toBe('miss');
  });

  it('normalizes queries and matches ETags', () => {
    expect(normalizeQuery('b=2&a=1&b=1')).toBe('a=1&b=2&b=1');
    expect(normalizeQuery('')).toBe('');
    expect(etagMatches('W/"abc-gzip"', '"abc"')).toBe(true);
    expect(etagMatches('"abcd"', '"abc"')).toBe(false);
    expect(etagMatches(undefined, '"abc"')).toBe(false);
  });
});

describe('csv', () => {
  it('writes a header row and one row per record', () => {
    const csv = toCsv(
      [
        { day: 1, date: '1970-01-01', price: 1.5, ok: true, apy: null },
        { day: 2, date: '1970-01-02', price: 2, ok: false, apy: 5.25 },
      ],
      ['day', 'date', 'price', { key: 'ok', header: 'settled' }, 'apy'],
    );
    expect(csv).toBe('day,date,price,settled,apy\n1,1970-01-01,1.5,true,\n2,1970-01-02,2,false,5.25\n');
  });
});

describe('pickEncoding', () => {
  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0.5, gzip', 'gzip'],
    ['*', 'br'],
    ['gzip;q=0, br;q=0', false],
    ['identity', false],
    ['', false],
  ])('%s -> %s', (header, expected) => {
    expect(pickEncoding(header)).toBe(expected);
  });
});
