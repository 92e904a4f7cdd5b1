/**
 * The SQL interface bounds a request before it works on it. A compressed body is refused as soon
 * as its inflated bytes pass the limit (not after inflating a gigabyte, in the analysts' process
 * whose memory is measured); a query slot is taken only once the whole body is in, and a body that
 * does not arrive by sql.http.clientTimeoutMs is refused (two connections that trickle a body hold
 * no slot: finding 4 of sql-findings.test.ts); beyond the running queries a bounded queue answers
 * in turn; a user without a password is only served on loopback.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
      http: { ...cfg.sql.http, port: 0, maxConcurrentQueries: 1, maxQueuedQueries: 0, clientTimeoutMs: 3000 },
    },
  });
});

/** The analysts' process's peak resident memory (bytes), from /proc. */
function peakRss(pid: number | undefined): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmHWM for process ${pid}`);
  return Number(m[1]) * 1024;
}

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
    const peak0 = peakRss(http.pid);
    const res = await fetch(`${http.url}/`, {
      method: 'POST',
      body: bomb,
      headers: { 'Content-Encoding': 'gzip' },
    });
    const text = await res.text();
    expect(res.status).toBe(413);
    expect(text).toMatch(
      /^Code: 1000\. DB::Exception: Request body is too large \(more than 1048576 bytes\)/,
    );
    // Inflating all of it would take 256 MiB of the analysts' process; stopped at the limit, not.
    expect(peakRss(http.pid) - peak0).toBeLessThan(64 * 1024 * 1024);
    expect(await (await fetch(`${http.url}/?query=SELECT+1`)).text()).toBe('1\n');
  });

  it('two clients that trickle a body hold no slot, and are refused at the body deadline', async () => {
    // `single` has one slot, no queue, and a 3 s body deadline.
    const trickle = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${single.url}/`,
          { method: 'POST', headers: { 'Content-Length': '100000' } },
          (res) => {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.write('S');
        const drip = setInterval(() => req.write(' '), 500);
        req.on('close', () => clearInterval(drip));
      });
    const slow = [trickle(), trickle()];
    await new Promise((r) => setTimeout(r, 700));
    // While both trickle, an analyst's query takes the one slot and is answered.
    const answer = await fetch(`${single.url}/?query=SELECT+42`);
    expect([answer.status, await answer.text()]).toEqual([200, '42\n']);
    for (const s of await Promise.all(slow)) {
      expect(s.status).toBe(408);
      expect(s.body).toMatch(/^Code: 209\. DB::Exception: Timeout exceeded while reading the request body/);
    }
  });

  it('queries beyond the running one wait in the queue and are all answered in turn', async () => {
    const q = (i: number) => `SELECT ${i}, count() > 0 FROM numbers(300000000)`;
    const answers = await Promise.all(
      [1, 2, 3].map(async (i) => {
        const res = await fetch(`${http.url}/?query=${encodeURIComponent(q(i))}`);
        return [res.status, (await res.text()).trim()];
      }),
    );
    expect(answers).toEqual([
      [200, '1\t1'],
      [200, '2\t1'],
      [200, '3\t1'],
    ]);
    // A fourth beyond 1 running + 2 queued is refused at once.
    const four = [1, 2, 3, 4].map((i) => fetch(`${http.url}/?query=${encodeURIComponent(q(i))}`));
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
