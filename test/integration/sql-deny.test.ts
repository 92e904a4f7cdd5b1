/**
 * The SQL interface denies by default. The requests that
 * found it (a schema from a query, a schema written to a file, a registry at a loopback
 * address) are refused and nothing happens on the side: no file created or changed, no
 * connection to a listener, no other query's result changed. A fuzz sends every setting the
 * engine knows (system.settings) with hostile values and finds nothing accepted that is not on
 * api/sql/settings.ts's list.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlHttp } from '../../api/sql/server.ts';
import { CAPS, ENGINE_SETTINGS, HTTP_SETTINGS, NOT_SETTINGS } from '../../api/sql/settings.ts';
import type { Store } from '../../store/client.ts';
import { type SqlServer, startSqlServer } from '../support/sql-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-deny-'));
const victim = join(dir, 'victim.txt');
const secret = 'secret-content-0123456789';
let sql: SqlServer;
let store: Store;
let http: SqlHttp;
let listener: Server;
let connections = 0;
let registry = '';

/**
 * The files under the test's directory (but the engine's own parts) and the entries of the
 * server's working directory (where a schema from a query left its cache file, `__cache__/`).
 */
function tree(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !f.includes(`${join(dir, 'data', 'chdb')}/store`))
    .concat(readdirSync(process.cwd()).map((f) => `cwd:${f}`))
    .sort();
}

beforeAll(async () => {
  writeFileSync(victim, `${secret}\n`);
  listener = createServer((_req, res) => res.end('{}'));
  listener.on('connection', () => connections++);
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  const addr = listener.address();
  registry = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  sql = await startSqlServer(join(dir, 'data'), async (s) => {
    await s.command(`CREATE TABLE ${s.database}.t (id UInt32) ENGINE = MergeTree ORDER BY id`);
    await s.command(`INSERT INTO ${s.database}.t SELECT number FROM numbers(10)`);
  });
  ({ store, http } = sql);
});

afterAll(async () => {
  await sql?.close();
  await new Promise<void>((r) => listener.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const post = (params: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${http.url}/?${params}`, { method: 'POST', body, headers });

/** What must hold after any request: nothing written, nobody called, the data as it was. */
async function nothingOnTheSide(before: string[]): Promise<void> {
  expect(tree(dir)).toEqual(before);
  expect(readFileSync(victim, 'utf8')).toBe(`${secret}\n`);
  expect(connections).toBe(0);
  expect(await store.query('SELECT count() AS n, sum(id) AS s FROM vaultstream.t')).toEqual([
    { n: '10', s: '45' },
  ]);
  expect(await (await post('', 'SELECT 1')).text()).toBe('1\n');
}

describe('the requests that found it are refused, and nothing happens on the side', () => {
  const cases: [string, string, string, RegExp][] = [
    [
      'finding 2: a schema from a query reads a file',
      `format_schema_source=query&format_schema_message_name=M&format_schema=${encodeURIComponent(
        `SELECT concat('syntax="proto3"; message M { T_', hex(substring(file('${victim}'),1,60)), ' x=1; }')`,
      )}`,
      'SELECT 1 AS x FORMAT Protobuf',
      /format_schema_source.*names a file, a URL, a schema source/,
    ],
    [
      'finding 3: output_format_schema writes a file',
      `output_format_schema=${encodeURIComponent(join(dir, 'written.txt'))}`,
      'SELECT 1 AS `a\n* * * * * root touch /x\n#` FORMAT Protobuf',
      /output_format_schema/,
    ],
    [
      'finding 4: a schema registry URL makes the server send a request',
      `format_avro_schema_registry_url=${encodeURIComponent(registry)}&output_format_avro_confluent_subject=s1`,
      'SELECT 1 AS x FORMAT AvroConfluent',
      /format_avro_schema_registry_url/,
    ],
    [
      'Protobuf with no setting',
      '',
      'SELECT 1 AS x FORMAT Protobuf',
      /output format Protobuf is not allowed/,
    ],
    [
      'AvroConfluent with no setting',
      '',
      'SELECT 1 AS x FORMAT AvroConfluent',
      /AvroConfluent is not allowed/,
    ],
    ['CapnProto', '', 'SELECT 1 AS x FORMAT CapnProto', /CapnProto is not allowed/],
    [
      'Template with a template file',
      `format_template_row=${encodeURIComponent(victim)}`,
      'SELECT 1 FORMAT Template',
      /format_template_row/,
    ],
    ['Template', '', 'SELECT 1 FORMAT Template', /Template is not allowed/],
    ['a refused default_format', 'default_format=Protobuf', 'SELECT 1', /Protobuf is not allowed/],
    ['formatRow with a schema format', '', "SELECT formatRow('ProtobufSingle', 1 AS x)", /ProtobufSingle/],
    ['the query cache', 'use_query_cache=1', 'SELECT 1', /use_query_cache/],
    [
      "getServerSetting('path')",
      '',
      "SELECT getServerSetting('path')",
      /getServerSetting\(\) is not allowed/,
    ],
    ['filesystem sizes', '', 'SELECT filesystemAvailable()', /filesystemAvailable\(\)/],
    ['system.stack_trace', '', 'SELECT * FROM system.stack_trace', /system\.stack_trace is not readable/],
    ['stack_trace in database=system', 'database=system', 'SELECT * FROM stack_trace', /stack_trace/],
    ['introspection', '', 'SELECT addressToSymbol(toUInt64(1))', /addressToSymbol/],
    ['demangle', '', "SELECT demangle('x')", /demangle/],
    ['the paths of system.tables', '', 'SELECT data_paths FROM system.tables', /holds the engine's paths/],
    ['system.tables with *', '', 'SELECT * FROM system.tables', /holds the engine's paths/],
    [
      'a path inside empty() with more',
      '',
      'SELECT empty(arrayConcat(data_paths, [])) FROM system.tables',
      /holds the engine's paths/,
    ],
    [
      'a path beside empty()',
      '',
      'SELECT empty(data_paths), data_paths FROM system.tables',
      /data_paths of system.tables holds/,
    ],
    ['system.disks', '', 'SELECT path FROM system.disks', /system\.disks/],
    ['merge() over system', '', "SELECT * FROM merge('system', '^tables$')", /merge\(\) reads only/],
    ['another database', 'database=nope', 'SELECT 1', /does not exist here/],
  ];
  for (const [name, params, body, message] of cases)
    it(name, async () => {
      const before = tree(dir);
      const res = await post(params, body);
      const text = await res.text();
      expect([res.status, text]).toEqual([expect.any(Number), expect.stringMatching(message)]);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(text).not.toContain(secret);
      expect(text).not.toContain(Buffer.from(secret).toString('hex').toUpperCase());
      await nothingOnTheSide(before);
    });

  it('what drivers send is accepted: versions, time zones, ids, progress, role, cosmetic options', async () => {
    const params = [
      'client_protocol_version=54460',
      'session_timezone=Europe/Paris',
      'role=analyst',
      'default_format=JSONEachRow',
      'wait_end_of_query=1',
      'send_progress_in_http_headers=1',
      'query_id=q1',
      'session_id=s1',
      'output_format_json_quote_64bit_integers=0',
      'date_time_output_format=iso',
      'extremes=0',
      'max_result_rows=1000',
      'max_execution_time=60',
      'readonly=1',
      // Grafana's row limit, JDBC v2's insert settings.
      'limit=1000',
      'async_insert=1',
      'wait_for_async_insert=1',
    ].join('&');
    const res = await post(
      params,
      "SELECT timezone() AS tz, toUInt64(7) AS n, toDateTime('2024-01-02 03:04:05') AS t",
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ tz: 'Europe/Paris', n: 7, t: '2024-01-02T02:04:05Z' });
    // Schema browsing as drivers do it: named columns of system.tables, and the schema views.
    const tables = await post(
      'default_format=TSV',
      "SELECT name FROM system.tables WHERE database = 'vaultstream'",
    );
    expect(await tables.text()).toBe('t\n');
    const info = await post(
      '',
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'vaultstream'",
    );
    expect(await info.text()).toBe('t\n');
    // JDBC v2's getTables (DBeaver) tells tables from remote ones by empty(t.data_paths): a flag, not a path.
    const kinds = await post(
      'default_format=TSV',
      "SELECT t.name, empty(t.data_paths) FROM system.tables t WHERE t.database = 'vaultstream'",
    );
    expect(await kinds.text()).toBe('t\t0\n');
  });
});

describe('fuzz: every setting the engine knows, with hostile values', () => {
  it('finds nothing accepted that is not on the list, and nothing on the side', async () => {
    const names = (await store.query<{ name: string }>('SELECT name FROM system.settings ORDER BY name')).map(
      (r) => r.name,
    );
    expect(names.length).toBeGreaterThan(1000);
    const listed = new Set([
      ...Object.keys(ENGINE_SETTINGS),
      ...HTTP_SETTINGS,
      ...NOT_SETTINGS,
      ...Object.keys(CAPS),
      'readonly',
    ]);
    // A value each kind of setting takes (a flag, a path, a URL, a query), none of them harmless.
    const hostile = ['1', join(dir, 'fuzz-written'), `${registry}/x`, `SELECT file('${victim}')`];
    const before = tree(dir);
    const accepted = new Set<string>();
    const statuses = new Map<number, number>();
    for (const name of names)
      for (const value of hostile) {
        const res = await post(`${name}=${encodeURIComponent(value)}`, 'SELECT 1 AS x FORMAT TSV');
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(text).not.toContain(secret);
        if (res.status === 200) {
          accepted.add(name);
          // The row itself (`extremes=1` adds the extremes after it, a CRLF option ends it so).
          expect([name, value, /^1\r?\n/.test(text)]).toEqual([name, value, true]);
        }
      }
    expect([...accepted].filter((n) => !listed.has(n))).toEqual([]);
    // No 5xx: a refusal is the client's error.
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    await nothingOnTheSide(before);
  }, 300_000);
});
