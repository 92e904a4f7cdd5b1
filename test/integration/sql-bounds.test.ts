/**
 * Issue 20, finding 5, and issue 23's queue: the SQL interface bounds a request before it works
 * on it. A compressed body is refused as soon as its inflated bytes pass the limit (not after
 * inflating a gigabyte); a request is admitted before its body is read (a client cannot hold
 * memory while it waits); beyond the running queries a bounded queue answers in turn; a user
 * without a password is only served on loopback.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { type Config, parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-bounds-'));
const log = createLogger('silent');
let cfg: Config;
let store: Store;
let http: SqlHttp;
let single: SqlHttp;

beforeAll(async () => {
  cfg = parseConfig({ dataDir: dir });
  store = await createStore(cfg);
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  http = await startSqlHttp({
    store,
    log,
    settings: {
      ...cfg.sql,
      http: { ...cfg.sql.http, port: 0, maxConcurrentQueries: 1, maxQueuedQueries: 2, queueWaitMs: 20_000 },
    },
  });
  single = await startSqlHttp({
    store,
    log,
    settings: {
      ...cfg.sql,
      http: { ...cfg.sql.http, port: 0, maxConcurrentQueries: 1, maxQueuedQueries: 0 },
    },
  });
});

afterAll(async () => {
  await http?.close();
  await single?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('bounded before work', () => {
  it('a gzip body that inflates past the limit is refused while it inflates', async () => {
    // 256 MiB of zeros: about 256 KiB as gzip, under the 1 MiB limit as sent.
    const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(cfg.sql.http.maxQueryBytes);
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const res = await fetch(`${http.url}/`, {
      method: 'POST',
      body: bomb,
      headers: { 'Content-Encoding': 'gzip' },
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    const grew = process.memoryUsage().rss - rss0;
    expect(res.status).toBe(413);
    expect(text).toMatch(
      /^Code: 1000\. DB::Exception: Request body is too large \(more than 1048576 bytes\)/,
    );
    // Inflating all of it takes 0.5-1 s and 256 MiB; stopped at the limit, neither.
    expect(ms).toBeLessThan(2000);
    expect(grew).toBeLessThan(64 * 1024 * 1024);
    expect(await (await fetch(`${http.url}/?query=SELECT+1`)).text()).toBe('1\n');
  });

  it('a request beyond the running and queued ones is refused before its body is read', async () => {
    const long = fetch(`${single.url}/?query=${encodeURIComponent('SELECT sleep(2)')}`);
    await new Promise((r) => setTimeout(r, 300));
    // Headers and the start of a body that never ends: the answer cannot wait for it.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${single.url}/`,
        { method: 'POST', headers: { 'Content-Length': '1000000' } },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write('SELECT ');
      setTimeout(() => reject(new Error('no answer before the body ended')), 1500).unref();
    });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/^Code: 202\./);
    expect((await long).status).toBe(200);
  });

  it('queries beyond the running one wait in the queue and are all answered in turn', async () => {
    const t0 = performance.now();
    const answers = await Promise.all(
      [1, 2, 3].map(async (i) => {
        const res = await fetch(`${http.url}/?query=${encodeURIComponent(`SELECT ${i}, sleep(0.5)`)}`);
        return [res.status, (await res.text()).trim()];
      }),
    );
    expect(answers).toEqual([
      [200, '1\t0'],
      [200, '2\t0'],
      [200, '3\t0'],
    ]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1400);
    // A fourth beyond 1 running + 2 queued is refused at once.
    const four = [1, 2, 3, 4].map((i) =>
      fetch(`${http.url}/?query=${encodeURIComponent(`SELECT ${i}, sleep(0.5)`)}`),
    );
    const statuses = await Promise.all(four.map(async (p) => (await p).status));
    expect(statuses.sort()).toEqual([200, 200, 200, 503]);
  });

  it('a user without a password is served only on loopback', async () => {
    const open = { ...cfg.sql.http, port: 0, host: '0.0.0.0' };
    await expect(startSqlHttp({ store, log, settings: { ...cfg.sql, http: open } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: /not loopback.*default.*no password/,
    });
    const guarded = await startSqlHttp({
      store,
      log,
      settings: { ...cfg.sql, http: { ...open, users: [{ name: 'analyst', password: 'p' }] } },
    });
    await guarded.close();
  });
});
