/**
 * The ClickHouse-compatible HTTP interface (`api/sql/server.ts`) over chDB, driven by real
 * clients: `@clickhouse/client` (JSON, JSONEachRow streaming, CSV) and curl with requests from
 * ClickHouse's HTTP interface documentation. Every refusal (statements, table functions,
 * setting overrides, caps, credentials) is tested, and the API's queries go before analysts'.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { parseConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'vs-sqlhttp-'));
let store: Store;
let http: SqlHttp;
let strict: SqlHttp;

beforeAll(async () => {
  const cfg = parseConfig({ dataDir: dir });
  store = await createStore(cfg);
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  await store.command(
    `CREATE TABLE ${store.database}.t (id UInt32, amount UInt256, note String) ENGINE = MergeTree ORDER BY id`,
  );
  await store.command(
    `INSERT INTO ${store.database}.t SELECT number, toUInt256(number) * toUInt256('1000000000000000000000'), concat('n', toString(number)) FROM numbers(1000)`,
  );
  const log = createLogger('silent');
  http = await startSqlHttp({ store, log, settings: { ...cfg.sql, http: { ...cfg.sql.http, port: 0 } } });
  strict = await startSqlHttp({
    store,
    log,
    settings: {
      ...cfg.sql,
      limits: { ...cfg.sql.limits, maxExecutionTimeSeconds: 3 },
      http: {
        ...cfg.sql.http,
        port: 0,
        maxConcurrentQueries: 1,
        maxQueuedQueries: 0,
        users: [{ name: 'analyst', password: 's3cret' }],
      },
    },
  });
});

afterAll(async () => {
  await http?.close();
  await strict?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (base: string, query: string, init: RequestInit = {}, extra = '') =>
  fetch(`${base}/?query=${encodeURIComponent(query)}${extra}`, init);

describe('@clickhouse/client, unchanged', () => {
  it('pings, and runs SELECTs as JSON, streamed JSONEachRow and CSV', async () => {
    const client = createClient({ url: http.url });
    try {
      expect((await client.ping()).success).toBe(true);
      const json = await client.query({
        query: 'SELECT id, amount FROM t WHERE id IN (1, 999) ORDER BY id',
        format: 'JSON',
      });
      const body = (await json.json()) as { data: unknown[]; rows: number };
      expect(body.rows).toBe(2);
      expect(body.data).toEqual([
        { id: 1, amount: '1000000000000000000000' },
        { id: 999, amount: '999000000000000000000000' },
      ]);
      const stream = await client.query({
        query: 'SELECT id FROM vaultstream.t ORDER BY id',
        format: 'JSONEachRow',
      });
      let n = 0;
      let sum = 0;
      for await (const rows of stream.stream<{ id: number }>())
        for (const row of rows) {
          n++;
          sum += row.json().id;
        }
      expect([n, sum]).toEqual([1000, 499_500]);
      const csv = await client.query({
        query: 'SELECT id, note FROM t ORDER BY id LIMIT 2',
        format: 'CSVWithNames',
      });
      expect(await csv.text()).toBe('"id","note"\n0,"n0"\n1,"n1"\n');
    } finally {
      await client.close();
    }
  });

  it('a refused statement is a ClickHouseError with code 164', async () => {
    const client = createClient({ url: http.url });
    try {
      await expect(client.command({ query: 'DROP TABLE t' })).rejects.toMatchObject({
        code: '164',
        type: 'READONLY',
      });
      expect((await store.query(`SELECT count() AS n FROM ${store.database}.t`))[0]).toEqual({ n: '1000' });
    } finally {
      await client.close();
    }
  });

  it('credentials: a configured user and password work, anything else is 516', async () => {
    const good = createClient({ url: strict.url, username: 'analyst', password: 's3cret' });
    const bad = createClient({ url: strict.url, username: 'analyst', password: 'nope' });
    try {
      expect(await (await good.query({ query: 'SELECT 1 AS x', format: 'JSONEachRow' })).json()).toEqual([
        { x: 1 },
      ]);
      await expect(bad.query({ query: 'SELECT 1', format: 'JSONEachRow' })).rejects.toMatchObject({
        code: '516',
        type: 'AUTHENTICATION_FAILED',
      });
    } finally {
      await good.close();
      await bad.close();
    }
  });
});

describe('curl, as in ClickHouse HTTP interface documentation', () => {
  it("curl 'http://localhost:8123/?query=SELECT%201' answers 1, and /ping answers Ok.", async () => {
    expect((await run('curl', ['-sS', `${http.url}/?query=SELECT%201`])).stdout).toBe('1\n');
    expect((await run('curl', ['-sS', `${http.url}/ping`])).stdout).toBe('Ok.\n');
    expect((await run('curl', ['-sS', `${http.url}/`])).stdout).toBe('Ok.\n');
  });

  it('the query in a POST body, and query + body joined', async () => {
    const { stdout } = await run('sh', ['-c', `echo 'SELECT 1' | curl -sS '${http.url}/' --data-binary @-`]);
    expect(stdout).toBe('1\n');
    const joined = await run('sh', [
      '-c',
      `echo '1, 2' | curl -sS '${http.url}/?query=SELECT' --data-binary @-`,
    ]);
    expect(joined.stdout).toBe('1\t2\n');
  });

  it('credentials by X-ClickHouse-User/Key headers, basic auth, and user/password parameters', async () => {
    const q = `${strict.url}/?query=SELECT%201`;
    expect(
      (await run('curl', ['-sS', '-H', 'X-ClickHouse-User: analyst', '-H', 'X-ClickHouse-Key: s3cret', q]))
        .stdout,
    ).toBe('1\n');
    expect((await run('curl', ['-sS', '-u', 'analyst:s3cret', q])).stdout).toBe('1\n');
    expect((await run('curl', ['-sS', `${q}&user=analyst&password=s3cret`])).stdout).toBe('1\n');
    const denied = await run('curl', ['-sS', '-w', '%{http_code}', '-u', 'analyst:wrong', q]);
    expect(denied.stdout).toMatch(
      /^Code: 516\. DB::Exception: analyst: Authentication failed.*\(AUTHENTICATION_FAILED\).*\n401$/s,
    );
  });

  it('gzip answers with enable_http_compression=1 and Accept-Encoding: gzip; gzip request bodies', async () => {
    const res = await get(
      http.url,
      'SELECT number FROM numbers(1000)',
      { headers: { 'Accept-Encoding': 'gzip' } },
      '&enable_http_compression=1',
    );
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect((await res.text()).split('\n').length).toBe(1001);
    const raw = await run('sh', [
      '-c',
      `curl -sS -H 'Accept-Encoding: gzip' '${http.url}/?enable_http_compression=1&query=SELECT+42' | gunzip`,
    ]);
    expect(raw.stdout).toBe('42\n');
    const body = gzipSync('SELECT 7');
    const posted = await fetch(`${http.url}/`, {
      method: 'POST',
      body,
      headers: { 'Content-Encoding': 'gzip' },
    });
    expect(await posted.text()).toBe('7\n');
    const broken = await fetch(`${http.url}/`, {
      method: 'POST',
      body: 'not gzip',
      headers: { 'Content-Encoding': 'gzip' },
    });
    expect(broken.status).toBe(400);
    expect(await broken.text()).toMatch(/^Code: 432\./);
    expect(gunzipSync(gzipSync('x')).toString()).toBe('x');
  });
});

describe('parameters, formats and headers', () => {
  it('database, default_format, query_id, FORMAT clause and X-ClickHouse-Summary', async () => {
    const res = await get(
      http.url,
      'SELECT count() AS n FROM one',
      {},
      '&database=system&default_format=JSONEachRow&query_id=q-1',
    );
    expect(await res.text()).toBe('{"n":"1"}\n');
    expect(res.headers.get('x-clickhouse-query-id')).toBe('q-1');
    expect(res.headers.get('x-clickhouse-format')).toBe('JSONEachRow');
    const summary = JSON.parse(res.headers.get('x-clickhouse-summary') ?? 'null');
    expect(summary).toMatchObject({ result_rows: '1', written_rows: '0' });
    const tsv = await get(
      http.url,
      'SELECT id, note FROM t WHERE id < 2 ORDER BY id FORMAT TabSeparatedWithNames',
    );
    expect(await tsv.text()).toBe('id\tnote\n0\tn0\n1\tn1\n');
    expect(tsv.headers.get('content-type')).toMatch(/^text\/tab-separated-values/);
  });

  it('a result of many blocks is one document in every format (JSON, CSVWithNames, Parquet)', async () => {
    const q = 'SELECT number FROM numbers(200000)';
    const json = (await (await get(http.url, `${q} FORMAT JSON`)).json()) as {
      rows: number;
      data: unknown[];
    };
    expect([json.rows, json.data.length]).toEqual([200_000, 200_000]);
    const csv = await (await get(http.url, `${q} FORMAT CSVWithNames`)).text();
    expect(csv.split('\n').filter((l) => l === '"number"')).toHaveLength(1);
    expect(csv.split('\n').length).toBe(200_002);
    const streamed = await (await get(http.url, q, {}, '&default_format=JSONEachRow')).text();
    expect(streamed.split('\n').length).toBe(200_001);
    const parquet = Buffer.from(await (await get(http.url, `${q} FORMAT Parquet`)).arrayBuffer());
    // One Parquet file: the magic number once at each end and nowhere else.
    expect(parquet.subarray(0, 4).toString()).toBe('PAR1');
    expect(parquet.subarray(-4).toString()).toBe('PAR1');
    expect(parquet.indexOf('PAR1', 4)).toBe(parquet.length - 4);
  });

  it('Native and RowBinaryWithNamesAndTypes come back as the engine writes them', async () => {
    const native = await get(http.url, 'SELECT toUInt8(5) AS x FORMAT Native');
    const bytes = Buffer.from(await native.arrayBuffer());
    expect(native.headers.get('content-type')).toBe('application/octet-stream');
    expect(bytes.includes(Buffer.from('UInt8'))).toBe(true);
    const rb = Buffer.from(
      await (await get(http.url, 'SELECT toUInt8(5) AS x FORMAT RowBinaryWithNamesAndTypes')).arrayBuffer(),
    );
    expect([...rb]).toEqual([1, 1, ...Buffer.from('x'), 5, ...Buffer.from('UInt8'), 5]);
  });
});

describe('read-only, enforced by the server', () => {
  const refused: [string, string, string, number, number][] = [
    ['INSERT', "INSERT INTO t VALUES (5000, 1, 'x')", '', 403, 164],
    ['ALTER', 'ALTER TABLE t DELETE WHERE 1', '', 403, 164],
    ['DROP', 'DROP TABLE t', '', 403, 164],
    ['CREATE', 'CREATE TABLE x (a UInt8) ENGINE = Memory', '', 403, 164],
    ['SYSTEM', 'SYSTEM DROP MARK CACHE', '', 403, 164],
    ['file()', "SELECT * FROM file('/etc/passwd', 'LineAsString')", '', 403, 164],
    ['url()', "SELECT * FROM url('http://127.0.0.1:9/x', 'CSV', 'a String')", '', 403, 164],
    ['s3()', "SELECT * FROM s3('http://127.0.0.1:9/b/x.csv', 'CSV', 'a String')", '', 403, 164],
    ['remote()', "SELECT * FROM remote('127.0.0.1:9000', system.one)", '', 403, 164],
    ['a SETTINGS clause', 'SELECT 1 SETTINGS readonly = 0', '', 403, 164],
    ['readonly=0 as a parameter', 'SELECT 1', '&readonly=0', 403, 164],
    ['another setting', 'SELECT 1', '&allow_ddl=1', 403, 164],
    ['a syntax error', 'SELEC 1', '', 400, 62],
    ['an unknown table', 'SELECT * FROM nope', '', 404, 60],
  ];
  for (const [name, query, extra, status, code] of refused)
    it(`${name}: ${status}, Code ${code}, ClickHouse's error body`, async () => {
      const res = await get(http.url, query, {}, extra);
      expect(res.status).toBe(status);
      expect(res.headers.get('x-clickhouse-exception-code')).toBe(String(code));
      expect(await res.text()).toMatch(
        new RegExp(`^Code: ${code}\\. DB::Exception: .+\\(version [\\d.]+\\)\\n$`),
      );
    });

  it('a POST of a write is refused the same way, and changes nothing', async () => {
    const res = await fetch(`${http.url}/`, { method: 'POST', body: "INSERT INTO t VALUES (5000, 1, 'x')" });
    expect(res.status).toBe(403);
    expect((await store.query(`SELECT count() AS n FROM ${store.database}.t`))[0]).toEqual({ n: '1000' });
  });

  it('a cap lowered by the client holds (max_result_rows=10)', async () => {
    const res = await get(http.url, 'SELECT number FROM numbers(100)', {}, '&max_result_rows=10');
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/^Code: 396\..*TOO_MANY_ROWS_OR_BYTES/);
  });

  it('a cap asked above the limit, or 0 (no limit), is lowered to the limit', async () => {
    for (const [extra, setting, expected] of [
      ['&max_execution_time=0', 'max_execution_time', '10'],
      ['&max_execution_time=30', 'max_execution_time', '10'],
      ['&max_result_rows=100000000000', 'max_result_rows', '1000000'],
      ['&max_memory_usage=1000000000000', 'max_memory_usage', '2147483648'],
      ['&max_execution_time=2.5', 'max_execution_time', '2.5'],
    ]) {
      const res = await get(http.url, `SELECT getSetting('${setting}')`, {}, extra);
      expect([extra, res.status, (await res.text()).trim()]).toEqual([extra, 200, expected]);
    }
  });

  it('max_execution_time stops a query that runs too long', async () => {
    const t0 = Date.now();
    const res = await get(strict.url, 'SELECT count() FROM numbers(1e12)', {
      headers: { 'X-ClickHouse-User': 'analyst', 'X-ClickHouse-Key': 's3cret' },
    });
    expect(await res.text()).toMatch(/^Code: 159\./);
    expect(Date.now() - t0).toBeLessThan(15_000);
  });
});

describe('the engine is shared: analysts are bounded and the API goes first', () => {
  const auth = { 'X-ClickHouse-User': 'analyst', 'X-ClickHouse-Key': 's3cret' };

  it('a second analyst query beyond maxConcurrentQueries is 503 Code 202', async () => {
    const long = get(strict.url, 'SELECT count() FROM numbers(1e12)', { headers: auth });
    await new Promise((r) => setTimeout(r, 300));
    const second = await get(strict.url, 'SELECT 1', { headers: auth });
    expect(second.status).toBe(503);
    expect(await second.text()).toMatch(/^Code: 202\./);
    await (await long).text();
  });

  it('a query whose client disconnects is cancelled: its slot is free again long before its cap', async () => {
    // strict: one slot, no queue, a 3 s cap. A result of 10^12 rows streams until its client goes.
    const abort = new AbortController();
    const long = fetch(`${strict.url}/?query=${encodeURIComponent('SELECT number FROM numbers(1e12)')}`, {
      headers: auth,
      signal: abort.signal,
    }).then(async (r) => {
      const reader = r.body!.getReader();
      await reader.read();
      return reader;
    });
    await long;
    const t0 = Date.now();
    abort.abort();
    let status = 0;
    while (status !== 200) {
      status = (await get(strict.url, 'SELECT 1', { headers: auth })).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(Date.now() - t0).toBeLessThan(2_500);
  });

  it("an analyst query runs in a process of its own: the service's store answers while it runs", async () => {
    const analyst = get(strict.url, 'SELECT count() FROM numbers(1e12)', { headers: auth }).then(
      async (r) => {
        await r.text();
        return 'analyst';
      },
    );
    await new Promise((r) => setTimeout(r, 200));
    const service = store.query('SELECT 3 AS x').then((rows) => {
      expect(rows).toEqual([{ x: 3 }]);
      return 'service';
    });
    expect(await Promise.race([analyst, service])).toBe('service');
    await analyst;
  });
});
