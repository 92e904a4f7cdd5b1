/**
 * Native for the client's protocol revision (api/sql/native-revision.ts). Grafana's
 * ClickHouse data source (clickhouse-go v2.47) sends `client_protocol_version=54460` and reads
 * Native with block info and a custom-serialization byte per column; the engine writes revision
 * 0, so before, its hello query failed with "read str: unexpected EOF". Here the real driver
 * connects and reads every type the views expose, over several blocks, with the values the
 * engine itself prints as text (test/support/sql-reference.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DriverAnswer, installDrivers, runDriver, TYPE_LITERALS_SQL } from '../support/drivers.ts';
import { canonicalRows, reference } from '../support/sql-reference.ts';
import { type SqlServer, startSqlServer } from '../support/sql-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-native-'));
let sql: SqlServer;

beforeAll(async () => {
  installDrivers();
  sql = await startSqlServer(dir);
}, 600_000);

afterAll(async () => {
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

const QUERIES = [
  {
    id: 'literals',
    sql: TYPE_LITERALS_SQL,
  },
  {
    // 150,000 rows: several Native blocks; LowCardinality with a dictionary per block.
    id: 'blocks',
    sql: `SELECT number AS n, toLowCardinality(toString(number % 7)) AS lc,
  toLowCardinality(if(number % 5 = 0, NULL, toString(number % 3))) AS lc_nullable,
  if(number % 3 = 0, NULL, toString(number)) AS nullable_string,
  [toLowCardinality('a'), toLowCardinality(toString(number % 2))] AS array_lc,
  map(toString(number % 4), toDecimal64(number / 8, 3)) AS map_decimal,
  toFixedString('ab', 2) AS fixed,
  CAST(if(number % 2 = 0, 'a', 'b'), 'Enum8(\\'a\\' = 1, \\'b\\' = 2)') AS enum,
  toFloat64(number) / 3 AS float, toInt8(-1) AS i8, toUInt16(65535) AS u16
FROM numbers(150000)`,
  },
];

describe('Native for client_protocol_version (clickhouse-go v2, Grafana)', () => {
  it('clickhouse-go connects (its hello query) and reads every type over several blocks', async () => {
    const connect = await runDriver('go', 'connect', sql.http.url, sql.store.database);
    expect(connect.ping).toBe(true);
    expect(connect.version).toMatch(/^\d+\.\d+/);
    const answers = (await runDriver('go', 'query', sql.http.url, sql.store.database, {
      queries: QUERIES,
    })) as DriverAnswer[];
    for (const [i, q] of QUERIES.entries()) {
      const a = answers[i] as DriverAnswer;
      expect(a.error, q.id).toBeUndefined();
      const ref = await reference(sql.http.url, q.sql);
      expect(a.columns, q.id).toEqual(ref.columns);
      expect(canonicalRows(ref.types, a.rows ?? []), q.id).toEqual(ref.rows);
    }
  }, 300_000);

  it('clickhouse-go reads Nothing, empty Map/Array, tuples, nested arrays and an empty result', async () => {
    const queries = [
      {
        id: 'nothing',
        sql: "SELECT NULL AS x, [] AS e, map() AS m, toNullable(toLowCardinality('a')) AS l FROM numbers(2)",
      },
      {
        id: 'tuples',
        sql: "SELECT tuple(number, 'a') AS t, CAST((1, 'b'), 'Tuple(a UInt8, b String)') AS nt, [[1, 2], [3]] AS aa, toDate32('2020-01-01') AS d FROM numbers(2)",
      },
      { id: 'none', sql: 'SELECT number FROM numbers(10) WHERE number > 100' },
    ];
    const answers = (await runDriver('go', 'query', sql.http.url, sql.store.database, {
      queries,
    })) as DriverAnswer[];
    expect(answers.map((a) => a.error)).toEqual([undefined, undefined, undefined]);
    expect(answers[0]?.rows).toEqual([
      [null, [], {}, 'a'],
      [null, [], {}, 'a'],
    ]);
    expect(answers[1]?.rows).toEqual([
      [['0', 'a'], { a: '1', b: 'b' }, [['1', '2'], ['3']], '2020-01-01'],
      [['1', 'a'], { a: '1', b: 'b' }, [['1', '2'], ['3']], '2020-01-01'],
    ]);
    expect(answers[2]?.rows ?? []).toEqual([]);
  }, 300_000);

  it('leaves Native as it is without client_protocol_version', async () => {
    const q = 'SELECT toLowCardinality(toString(number)) AS s FROM numbers(3) FORMAT Native';
    const plain = Buffer.from(
      await (await fetch(`${sql.http.url}/`, { method: 'POST', body: q })).arrayBuffer(),
    );
    // numColumns 1, numRows 3, name "s", type, no block info before them.
    expect([...plain.subarray(0, 4)]).toEqual([1, 3, 1, 's'.charCodeAt(0)]);
    const v = Buffer.from(
      await (
        await fetch(`${sql.http.url}/?client_protocol_version=54460`, { method: 'POST', body: q })
      ).arrayBuffer(),
    );
    const type = 'LowCardinality(String)';
    expect(v.length).toBe(plain.length + 8 + 1);
    expect([...v.subarray(0, 8)]).toEqual([1, 0, 2, 0xff, 0xff, 0xff, 0xff, 0]);
    expect(v[8 + 4 + 1 + type.length]).toBe(0);
  });

  it('refuses a type it cannot walk with a clear error, not a corrupt answer', async () => {
    const res = await fetch(`${sql.http.url}/?client_protocol_version=54460&default_format=Native`, {
      method: 'POST',
      body: "SELECT CAST(1, 'Variant(UInt8, String)') AS v",
    });
    expect(res.status).not.toBe(200);
    expect(await res.text()).toMatch(/client_protocol_version.*Variant/);
  });
});
