/**
 * The smaller protocol items, on the SQL interface over chDB:
 * every error a query causes is a 4xx whose body shows the client's own query and the engine's
 * own code name; the documented query size holds; schema statements answer in any format;
 * `param_*` values, `X-ClickHouse-Format` and `X-ClickHouse-Database` reach the engine; unknown
 * paths are 404.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlHttp } from '../../api/sql/server.ts';
import { type SqlServer, startSqlServer } from '../support/sql-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-proto-'));
let sql: SqlServer;
let http: SqlHttp;

beforeAll(async () => {
  sql = await startSqlServer(dir, async (s) => {
    await s.command(
      `CREATE TABLE ${s.database}.t (slug LowCardinality(String), n UInt32) ENGINE = MergeTree ORDER BY slug`,
    );
    await s.command(`INSERT INTO ${s.database}.t VALUES ('a\\tb', 1), ('ndev0', 2)`);
  });
  http = sql.http;
});

afterAll(async () => {
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (body: string, params = '', headers: Record<string, string> = {}) =>
  fetch(`${http.url}/?${params}`, { method: 'POST', body, headers });

describe('errors: 4xx, the client query, the engine code name', () => {
  const cases: [string, string, string, number, RegExp][] = [
    [
      'a too deep query',
      `SELECT ${'('.repeat(3000)}1${')'.repeat(3000)}`,
      '',
      400,
      /^Code: 306\..*\(TOO_DEEP_RECURSION\)/s,
    ],
    ['a query_id with CR/LF', 'SELECT 1', 'query_id=a%0D%0Ab', 400, /^Code: 36\..*query_id/],
    [
      'an unknown table',
      'SELECT * FROM nope',
      '',
      404,
      /^Code: 60\. .*in scope SELECT \* FROM nope\. .*\(UNKNOWN_TABLE\)/,
    ],
    ['a syntax error', 'SELEC 1', '', 400, /^Code: 62\..*\(SYNTAX_ERROR\)/],
    [
      'an alias twice',
      'SELECT 1 AS a, 2 AS a',
      '',
      400,
      /In scope SELECT 1 AS a, 2 AS a\. \(MULTIPLE_EXPRESSIONS_FOR_ALIAS\)/,
    ],
    ['throwIf', 'SELECT throwIf(1)', '', 400, /\(FUNCTION_THROW_IF_VALUE_IS_NON_ZERO\)/],
  ];
  for (const [name, body, params, status, message] of cases)
    it(name, async () => {
      const res = await post(body, params);
      const text = await res.text();
      expect([res.status, text]).toEqual([status, expect.stringMatching(message)]);
      expect(text).not.toMatch(
        /formatQuerySingleLine|EXPLAIN AST|readonly = 1|max_execution_time|UNKNOWN_EXCEPTION/,
      );
    });

  it('an unknown path is 404', async () => {
    const res = await fetch(`${http.url}/play`);
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/There is no handle \/play/);
  });
});

describe('protocol', () => {
  it('a query of 900 KiB runs (sql.http.maxQueryBytes is 1 MiB; the engine parser alone stops at 256 KiB)', async () => {
    const res = await post(`SELECT length('${'x'.repeat(900 * 1024)}')`);
    expect([res.status, await res.text()]).toEqual([200, `${900 * 1024}\n`]);
  });

  it('param_* values are bound by the engine, in the escaped text form', async () => {
    const res = await post('SELECT n FROM t WHERE slug = {slug:String}', 'param_slug=ndev0');
    expect(await res.text()).toBe('2\n');
    const tab = await post('SELECT n FROM t WHERE slug = {slug:String}', 'param_slug=a%5Ctb');
    expect(await tab.text()).toBe('1\n');
    const missing = await post('SELECT {x:UInt8}');
    expect(missing.status).toBe(400);
    expect(await missing.text()).toMatch(/\(UNKNOWN_QUERY_PARAMETER\)/);
  });

  it('X-ClickHouse-Format and X-ClickHouse-Database are honoured', async () => {
    const res = await post('SELECT n FROM t ORDER BY n', '', {
      'X-ClickHouse-Format': 'JSONEachRow',
      'X-ClickHouse-Database': 'vaultstream',
    });
    expect(res.headers.get('x-clickhouse-format')).toBe('JSONEachRow');
    expect(await res.text()).toBe('{"n":1}\n{"n":2}\n');
    const refused = await post('SELECT 1', '', { 'X-ClickHouse-Format': 'Protobuf' });
    expect(refused.status).toBe(403);
  });

  for (const format of ['TabSeparated', 'TSVRaw', 'JSONEachRow', 'Native', 'JSON'])
    it(`schema statements answer in ${format}`, async () => {
      for (const statement of [
        'SHOW TABLES',
        'SHOW DATABASES',
        'DESCRIBE TABLE t',
        'EXISTS TABLE t',
        'SHOW CREATE TABLE t',
        'SHOW COLUMNS FROM t',
        'EXPLAIN SELECT n FROM t',
      ]) {
        const res = await post(statement, `default_format=${format}`);
        const text = await res.text();
        expect([statement, res.status]).toEqual([statement, 200]);
        expect(text.length).toBeGreaterThan(0);
      }
    });
});
