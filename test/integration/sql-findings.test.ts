/**
 * A hostile analyst against the SQL interface, one test per finding (the fourth, two slow bodies
 * locking out every analyst, is in sql-bounds.test.ts). Each ran against the interface before it
 * was built as it is now and failed there: a compressed result froze this process's event loop;
 * DESCRIBE (subquery), `IN <table>` and scalar subqueries read the server's settings, disks and
 * another user's error; max_execution_time=1e-300 lifted the time cap; the result cap counted the
 * engine's bytes, not the ones sent, and a client that never read held its query forever; the
 * checks had no time limit; and a setting on the documented list was refused by the engine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { ENGINE_SETTINGS } from '../../api/sql/settings.ts';
import { type Config, parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-findings-'));
const log = createLogger('silent');
let cfg: Config;
let store: Store;
let http: SqlHttp;
/** One slot, a 16 MiB result cap, 2 s client deadlines. */
let tight: SqlHttp;
/** A 200 ms check deadline. */
let hasty: SqlHttp;

beforeAll(async () => {
  cfg = parseConfig({ dataDir: dir });
  store = await createStore(cfg);
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  await store.command(`CREATE TABLE ${store.database}.t (id UInt32) ENGINE = MergeTree ORDER BY id`);
  await store.command(`INSERT INTO ${store.database}.t SELECT number FROM numbers(10)`);
  http = await startSqlHttp({
    store,
    log,
    settings: {
      ...cfg.sql,
      http: {
        ...cfg.sql.http,
        port: 0,
        users: [
          { name: 'alice', password: '' },
          { name: 'bob', password: '' },
        ],
      },
    },
  });
  tight = await startSqlHttp({
    store,
    log,
    settings: {
      ...cfg.sql,
      limits: { ...cfg.sql.limits, maxResultBytes: 16 << 20 },
      http: {
        ...cfg.sql.http,
        port: 0,
        maxConcurrentQueries: 1,
        maxQueuedQueries: 0,
        clientTimeoutMs: 2000,
      },
    },
  });
  hasty = await startSqlHttp({
    store,
    log,
    settings: { ...cfg.sql, http: { ...cfg.sql.http, port: 0, checkTimeoutMs: 200 } },
  });
}, 120_000);

afterAll(async () => {
  await http?.close();
  await tight?.close();
  await hasty?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = async (base: string, query: string, init: RequestInit = {}, extra = '') => {
  const res = await fetch(`${base}/?query=${encodeURIComponent(query)}${extra}`, init);
  return { status: res.status, text: await res.text() };
};

/** Waits until a one-slot interface answers (a query cut off before stops at its next block). */
async function slotFree(h: SqlHttp): Promise<void> {
  for (;;) {
    if ((await fetch(`${h.url}/?query=SELECT+1`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What an answer must never hold: this machine's directories. */
const noPaths = (text: string) => {
  expect(text).not.toContain(dir);
  expect(text).not.toMatch(/\/(tmp|root|home|var\/lib)\/[\w.-]/);
};

describe('finding 1: a compressed result does not hold up the service', () => {
  it("a brotli answer of 10 MB is compressed outside this process's event loop", async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const res = await fetch(
      `${http.url}/?enable_http_compression=1&query=${encodeURIComponent('SELECT randomPrintableASCII(100) FROM numbers(100000) FORMAT TSV')}`,
      { headers: { 'Accept-Encoding': 'br' } },
    );
    // fetch decodes br itself.
    const body = Buffer.from(await res.arrayBuffer());
    delay.disable();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('br');
    expect(body.toString().split('\n').length).toBe(100_001);
    // Compressed here (quality 11 on this thread) it held the loop for tens of seconds.
    expect(delay.max / 1e6).toBeLessThan(1000);
  }, 180_000);
});

describe('finding 2: access is what the engine resolves', () => {
  const cases: [string, string][] = [
    [
      'DESCRIBE of a subquery whose LIMIT reads the server settings',
      "DESCRIBE (SELECT 1 LIMIT (SELECT toString(groupArray((name, value))) FROM system.server_settings WHERE value LIKE '%/%'))",
    ],
    [
      'DESCRIBE of a table function whose argument reads the disks',
      'DESCRIBE (SELECT * FROM generateRandom((SELECT any(path) FROM system.disks)))',
    ],
    ['IN a forbidden table', "SELECT 'x' IN system.disks"],
    ['a scalar subquery in LIMIT', 'SELECT 1 LIMIT (SELECT toUInt64(length(any(path))) FROM system.disks)'],
    ['the processes', 'SELECT query FROM system.processes'],
    ['stack traces', 'SELECT * FROM system.stack_trace'],
    [
      'the paths of the tables, through a subquery',
      'SELECT x FROM (SELECT data_paths AS x FROM system.tables)',
    ],
    [
      'the paths in a scalar subquery of DESCRIBE',
      'DESCRIBE (SELECT 1 LIMIT (SELECT length(toString(data_paths)) FROM system.tables LIMIT 1))',
    ],
    ['a server setting by function', "SELECT getServerSetting('path')"],
    ['a file by the default database', 'SELECT * FROM default.`/etc/hostname`'],
  ];
  for (const [name, query] of cases)
    it(`${name}: refused, 4xx, no path`, async () => {
      const res = await ask(http.url, query);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.text).toMatch(/^Code: \d+\. DB::Exception: /);
      noPaths(res.text);
    });

  it("another user's failed query cannot be read back from the engine's errors", async () => {
    const alice = await ask(http.url, "SELECT toUInt64('alice-api-key-AKIA1234SECRET')", {
      headers: { 'X-ClickHouse-User': 'alice' },
    });
    expect(alice.status).toBe(400);
    const bob = await ask(
      http.url,
      "DESCRIBE (SELECT 1 LIMIT (SELECT toString(groupArray(last_error_message)) FROM system.errors WHERE last_error_message LIKE '%AKIA%'))",
      { headers: { 'X-ClickHouse-User': 'bob' } },
    );
    expect(bob.status).toBeGreaterThanOrEqual(400);
    expect(bob.status).toBeLessThan(500);
    expect(bob.text).not.toContain('AKIA1234SECRET');
    const errors = await ask(http.url, 'SELECT last_error_message FROM system.errors', {
      headers: { 'X-ClickHouse-User': 'bob' },
    });
    expect(errors.text).not.toContain('AKIA1234SECRET');
  });
});

describe('finding 3: caps that cannot be lifted', () => {
  it('max_execution_time=1e-300 (no limit to the engine) is refused before anything runs', async () => {
    const res = await ask(
      http.url,
      'SELECT sum(cityHash64(number)) FROM numbers(100000000000)',
      { signal: AbortSignal.timeout(60_000) },
      '&max_execution_time=1e-300',
    );
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/max_execution_time/);
  });

  it("every cap in force is the server's or lower, read back from the engine", async () => {
    const res = await ask(
      http.url,
      "SELECT getSetting('max_execution_time'), getSetting('max_result_rows'), getSetting('readonly')",
      {},
      '&max_result_rows=0&max_execution_time=100000',
    );
    expect(res).toEqual({
      status: 200,
      text: `${cfg.sql.limits.maxExecutionTimeSeconds}\t${cfg.sql.limits.maxResultRows}\t2\n`,
    });
  });
});

describe('finding 5: the result cap counts what is sent, and a client that stops reading is cut off', () => {
  it('an answer of 100 MB from 100 KB of engine bytes is refused at the 16 MiB cap', async () => {
    await slotFree(tight);
    const name = 'a'.repeat(1000);
    // JSON is a document: it is formatted whole, then counted, and refused before anything is sent.
    const res = await ask(tight.url, `SELECT 1 AS \`${name}\` FROM numbers(100000) FORMAT JSON`);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^Code: 396\..*max bytes: 16777216/);
  });

  it('a streamed answer past the cap is cut off, never sent whole', async () => {
    await slotFree(tight);
    const res = await fetch(
      `${tight.url}/?query=${encodeURIComponent("SELECT number, repeat('x', 100) FROM numbers(10000000)")}`,
    );
    expect(res.status).toBe(200);
    let got = 0;
    await expect(
      (async () => {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) got += chunk.length;
      })(),
    ).rejects.toThrow();
    expect(got).toBeLessThanOrEqual(16 << 20);
  });

  it('a client that stops reading is cut off at the deadline, not sent its whole answer', async () => {
    // 110 MB as TSV (within the 256 MiB cap): held for a client that never reads, it stayed in memory.
    const total = 1_000_000 * 111;
    const got = await new Promise<{ bytes: number; ended: 'end' | 'error' }>((resolve, reject) => {
      const req = request(
        `${http.url}/?query=${encodeURIComponent("SELECT number % 10, repeat('x', 108) FROM numbers(1000000)")}`,
        (res) => {
          let bytes = 0;
          res.pause();
          // Past the 10 s deadline of sql.http.clientTimeoutMs, read what is left.
          setTimeout(() => {
            res.on('data', (d: Buffer) => (bytes += d.length));
            res.on('end', () => resolve({ bytes, ended: 'end' }));
            res.on('error', () => resolve({ bytes, ended: 'error' }));
            res.on('aborted', () => resolve({ bytes, ended: 'error' }));
            res.resume();
          }, cfg.sql.http.clientTimeoutMs + 3000);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(got.ended).toBe('error');
    expect(got.bytes).toBeLessThan(total / 2);
    await slotFree(http);
  }, 60_000);
});

describe('finding 6: the smaller ones', () => {
  it('a query that takes longer to check than sql.http.checkTimeoutMs is refused', async () => {
    const where = Array.from({ length: 30_000 }, (_, i) => `${i} = ${i}`).join(' AND ');
    const res = await fetch(`${hasty.url}/`, { method: 'POST', body: `SELECT 1 WHERE ${where}` });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(
      /^Code: 160\. DB::Exception: checking the query took longer than 200 ms/,
    );
  });

  it('every setting on the documented list is one the engine accepts', async () => {
    const samples = [
      ...['1', 'UTC', 'iso', 'utf-8', 'auto', 'break', 'throw', 'lz4', 'lz4_frame', 'snappy', 'zstd', 'none'],
      ...['null', 'escaped', 'bin', '2.latest', ',', '10', 'x'],
    ];
    const refused: string[] = [];
    for (const [name, check] of Object.entries(ENGINE_SETTINGS)) {
      // Every value a setting lists, else one sample it takes.
      const values = (check as { values?: string[] }).values ?? samples.filter((v) => check(v)).slice(0, 1);
      expect(values.length, name).toBeGreaterThan(0);
      for (const value of values) {
        const res = await ask(
          http.url,
          'SELECT 1 AS x FORMAT TSV',
          {},
          `&${name}=${encodeURIComponent(value)}`,
        );
        if (res.status !== 200) refused.push(`${name}=${value}: ${res.text.slice(0, 120)}`);
      }
    }
    expect(refused).toEqual([]);
  });
});
