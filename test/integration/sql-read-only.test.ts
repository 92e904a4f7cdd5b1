/**
 * Read-only SQL (`store/read-only.ts`) through `vaultstream sql` (cli/sql.ts, which runs a
 * statement through the SQL interface over its store): every way a "read-only" query used to
 * read or write files, send requests, lift its own limits or run forever is refused before it
 * runs, and nothing happens on the side (no file written, no request received); reads work in
 * every format; the caps hold.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlSession } from '../../cli/sql.ts';
import { parseConfig } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { createStore, type Store } from '../../store/client.ts';
import { sqlWords } from '../../store/read-only-ast.ts';
import { runCli } from '../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-'));
const victim = join(dir, 'victim.txt');
const written = join(dir, 'written.txt');
let store: Store;
let session: SqlSession;
let server: Server;
let hits = 0;
let url = '';

beforeAll(async () => {
  writeFileSync(victim, 'secret-content\n');
  server = createServer((_req, res) => {
    hits++;
    res.end('1\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/x`;
  const cfg = parseConfig({ dataDir: join(dir, 'data') });
  store = await createStore(cfg);
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  await store.command(
    `CREATE TABLE ${store.database}.t (id UInt32, amount UInt256) ENGINE = MergeTree ORDER BY id`,
  );
  await store.command(
    `INSERT INTO ${store.database}.t VALUES (1, 10), (2, 115792089237316195423570985008687907853269984665640564039457584007913129639935)`,
  );
  // The caps of `sql.limits`, low enough to reach in a test.
  session = await openSql(store, {
    ...cfg.sql,
    limits: {
      ...cfg.sql.limits,
      maxExecutionTimeSeconds: 2,
      maxResultRows: 10,
      maxMemoryUsageBytes: 64 << 20,
    },
  });
});

afterAll(async () => {
  await session?.close();
  await store?.close();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const sql = (query: string, format: 'table' | 'json' | 'csv' = 'json') => session.run(query, { format });

/** Runs `query` read-only and returns the refusal, failing if it ran. */
async function refusal(query: string): Promise<VaultstreamError> {
  try {
    const out = await sql(query);
    throw new Error(`ran: ${String(out).slice(0, 200)}`);
  } catch (err) {
    if (!(err instanceof VaultstreamError)) throw err;
    return err;
  }
}

describe('refused before it runs, with nothing happening on the side', () => {
  const cases: [string, () => string, RegExp][] = [
    [
      'file() reads any file',
      () => `SELECT * FROM file('${victim}', 'LineAsString')`,
      /table function file\(\) is not allowed/,
    ],
    ['the scalar file() reads a file', () => `SELECT file('${victim}')`, /function file\(\) is not allowed/],
    [
      'file() inside a subquery',
      () => `SELECT count() FROM (SELECT * FROM file('${victim}', 'LineAsString'))`,
      /table function file\(\) is not allowed/,
    ],
    [
      'file() in an IN subquery',
      () => `SELECT 1 WHERE 'x' IN (SELECT * FROM file('${victim}', 'LineAsString'))`,
      /table function file\(\) is not allowed/,
    ],
    [
      'INSERT INTO FUNCTION file() writes a file',
      () => `INSERT INTO FUNCTION file('${written}', 'LineAsString') SELECT 'x'`,
      /only SELECT, SHOW, DESCRIBE, EXISTS and EXPLAIN.*INSERT/,
    ],
    [
      'truncating insert overwrites a file',
      () =>
        `INSERT INTO FUNCTION file('${victim}', 'LineAsString') SELECT 'gone' SETTINGS engine_file_truncate_on_insert = 1`,
      /INSERT|SETTINGS clause is not allowed/,
    ],
    [
      'url() sends a GET',
      () => `SELECT * FROM url('${url}', 'LineAsString')`,
      /table function url\(\) is not allowed/,
    ],
    [
      'INSERT INTO FUNCTION url() sends a POST',
      () => `INSERT INTO FUNCTION url('${url}', 'LineAsString') SELECT 'body'`,
      /INSERT/,
    ],
    ['s3()', () => `SELECT * FROM s3('${url}', 'CSV', 'a String')`, /table function s3\(\) is not allowed/],
    [
      'remote()',
      () => `SELECT * FROM remote('127.0.0.1:9000', system.one)`,
      /table function remote\(\) is not allowed/,
    ],
    [
      'mysql()',
      () => `SELECT * FROM mysql('127.0.0.1:3306', 'd', 't', 'u', 'p')`,
      /table function mysql\(\) is not allowed/,
    ],
    [
      'executable()',
      () => `SELECT * FROM executable('cat /etc/passwd', 'LineAsString', 'l String')`,
      /table function executable\(\) is not allowed/,
    ],
    [
      'a table function outside the list',
      () => `SELECT * FROM format(CSV, '1,2')`,
      /table function format\(\) is not allowed/,
    ],
    ['INTO OUTFILE writes a file', () => `SELECT 1 INTO OUTFILE '${written}'`, /INTO OUTFILE/],
    ['SHOW ... INTO OUTFILE', () => `SHOW TABLES INTO OUTFILE '${written}'`, /INTO OUTFILE/],
    ['SETTINGS lifting readonly', () => 'SELECT 1 SETTINGS readonly = 0', /SETTINGS clause is not allowed/],
    [
      'SETTINGS lifting the time cap',
      () => 'SELECT count() FROM numbers(10) SETTINGS max_execution_time = 0',
      /SETTINGS clause is not allowed/,
    ],
    [
      'SETTINGS inside a subquery',
      () => 'SELECT * FROM (SELECT 1 SETTINGS readonly = 0)',
      /SETTINGS clause is not allowed/,
    ],
    ['SET', () => 'SET readonly = 0', /this is a SET statement/],
    ['CREATE', () => 'CREATE TABLE vaultstream.x (a UInt8) ENGINE = Memory', /CREATE/],
    ['DROP', () => 'DROP TABLE vaultstream.t', /DROP/],
    ['ALTER', () => 'ALTER TABLE vaultstream.t DELETE WHERE 1', /ALTER/],
    ['TRUNCATE', () => 'TRUNCATE TABLE vaultstream.t', /TRUNCATE/],
    ['INSERT', () => 'INSERT INTO vaultstream.t VALUES (3, 3)', /INSERT/],
    ['SYSTEM', () => 'SYSTEM DROP MARK CACHE', /SYSTEM/],
    ['OPTIMIZE', () => 'OPTIMIZE TABLE vaultstream.t FINAL', /OPTIMIZE/],
    ['KILL', () => 'KILL QUERY WHERE 1', /KILL/],
    ['USE', () => 'USE system', /USE/],
    [
      'EXPLAIN of an INSERT',
      () => `EXPLAIN AST INSERT INTO FUNCTION file('${written}') SELECT 1`,
      /contains a InsertQuery/,
    ],
  ];
  for (const [name, query, message] of cases)
    it(name, async () => {
      const err = await refusal(query());
      expect(err.code).toBe('READ_ONLY');
      expect(err.message).toMatch(message);
    });

  it('left every file and the URL alone', () => {
    expect(existsSync(written)).toBe(false);
    expect(readFileSync(victim, 'utf8')).toBe('secret-content\n');
    expect(hits).toBe(0);
  });

  it('a second statement is a syntax error (the engine parses one statement) and never runs', async () => {
    const err = await refusal(`SELECT 1; INSERT INTO FUNCTION file('${written}', 'LineAsString') SELECT 'x'`);
    expect(err.code).toBe('SQL_SYNTAX');
    expect(err.message).toMatch(/^Syntax error \(Multi-statements are not allowed\)/);
    expect(existsSync(written)).toBe(false);
  });

  it('a syntax error is the user mistake SQL_SYNTAX with ClickHouse code 62', async () => {
    const err = await refusal('SELEC 1');
    expect(err.code).toBe('SQL_SYNTAX');
    expect(err.message).toMatch(/^Syntax error/);
    expect(err.details?.clickhouseCode).toBe(62);
  });
});

describe('caps the client cannot lift', () => {
  it('numbers(1e12) stops at max_execution_time', async () => {
    const t0 = Date.now();
    const err = await refusal('SELECT count() FROM numbers(1e12)');
    expect(err.code).toBe('TIMEOUT');
    expect(err.message).toMatch(/Timeout exceeded/);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });

  it('more rows than max_result_rows is an error, never a silent cut', async () => {
    const err = await refusal('SELECT number FROM numbers(100)');
    expect(err.message).toMatch(/max rows: 10/);
  });

  it('max_memory_usage stops a query that needs more', async () => {
    const err = await refusal('SELECT groupArray(number) FROM numbers(100000000)');
    expect(err.message).toMatch(/MEMORY_LIMIT_EXCEEDED|memory limit/i);
  });

  it('the session is read-only and holds the caps, whatever the statement', async () => {
    const out = await sql("SELECT getSetting('readonly') AS ro, getSetting('max_execution_time') AS t");
    expect(JSON.parse(String(out))).toEqual([{ ro: 2, t: 2 }]);
  });
});

describe('reads work', () => {
  it('SELECT over a table, uint256 exact, as JSON', async () => {
    const out = JSON.parse(String(await sql('SELECT id, amount FROM vaultstream.t ORDER BY id')));
    expect(out).toEqual([
      { id: 1, amount: '10' },
      { id: 2, amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935' },
    ]);
  });

  it("the query's own FORMAT prints the engine's bytes", async () => {
    const out = await sql(
      'SELECT id, toString(amount) AS a FROM vaultstream.t ORDER BY id FORMAT CSVWithNames',
    );
    expect(String(out)).toBe(
      '"id","a"\n1,"10"\n2,"115792089237316195423570985008687907853269984665640564039457584007913129639935"\n',
    );
  });

  it('SHOW, DESCRIBE, EXISTS, EXPLAIN, CTEs, UNION and allowed table functions', async () => {
    expect(String(await sql('SHOW TABLES FROM vaultstream', 'csv'))).toContain('t');
    expect(String(await sql('DESCRIBE TABLE vaultstream.t', 'csv'))).toContain('UInt256');
    expect(String(await sql('EXISTS TABLE vaultstream.t', 'csv'))).toContain('1');
    expect(String(await sql('EXPLAIN SELECT 1', 'csv'))).toMatch(/ReadFrom/);
    expect(
      JSON.parse(
        String(
          await sql('WITH x AS (SELECT 2 AS a) SELECT a FROM x UNION ALL SELECT sum(number) FROM numbers(4)'),
        ),
      ),
    ).toEqual([{ a: '2' }, { a: '6' }]);
    expect(JSON.parse(String(await sql("SELECT count() AS n FROM merge('vaultstream', '^t$')")))).toEqual([
      { n: '2' },
    ]);
  });

  it('string literals that mention forbidden words are data, not statements', async () => {
    const out = JSON.parse(String(await sql("SELECT 'INTO OUTFILE file(x); SETTINGS readonly=0' AS s")));
    expect(out).toEqual([{ s: 'INTO OUTFILE file(x); SETTINGS readonly=0' }]);
    expect(sqlWords("SELECT 'a''b' AS `INTO`, \"OUTFILE\" FROM t")).toEqual(['SELECT', 'AS', 'FROM', 'T']);
  });
});

describe('vaultstream sql, as an operator runs it', () => {
  it('a write without --write says so, exits 2, and changes nothing', async () => {
    const env = { VAULTSTREAM_DATA_DIR: join(dir, 'cli') };
    const made = await runCli(['sql', '--write', 'CREATE DATABASE IF NOT EXISTS vaultstream'], env);
    expect(made.code).toBe(0);
    const res = await runCli(['sql', "INSERT INTO FUNCTION file('x.txt', 'LineAsString') SELECT 'x'"], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      'vaultstream: READ_ONLY: only SELECT, SHOW, DESCRIBE, EXISTS and EXPLAIN are allowed here (read-only); this is a INSERT statement. `vaultstream sql` is read-only unless --write is given',
    );
    const ok = await runCli(['sql', 'SELECT 1 AS one', '--format', 'csv'], env);
    expect(ok.stdout).toBe('one\n1\n');
    // Piped: TabSeparated, as clickhouse-client prints; --format takes ClickHouse's format names.
    expect((await runCli(['sql', 'SELECT 1 AS a, 2 AS b'], env)).stdout).toBe('1\t2\n');
    expect((await runCli(['sql', 'SELECT 1 AS a', '--format', 'JSONEachRow'], env)).stdout).toBe('{"a":1}\n');
    const schema = await runCli(['sql', 'SELECT 1 AS a', '--format', 'Protobuf'], env);
    expect([schema.code, schema.stderr]).toEqual([
      2,
      expect.stringContaining('output format Protobuf is not allowed'),
    ]);
    const bad = await runCli(['sql', "SELECT * FROM file('/etc/passwd', 'LineAsString')"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('READ_ONLY: table function file() is not allowed here');
    expect(bad.stdout).not.toContain('root:');
    // sql.limits hold with the service stopped; the service's database is current.
    const capped = {
      ...env,
      VAULTSTREAM__sql__limits__maxExecutionTimeSeconds: '2',
      VAULTSTREAM__sql__limits__maxResultRows: '5',
    };
    const settings = await runCli(
      [
        'sql',
        "SELECT getSetting('max_execution_time') AS t, getSetting('max_result_rows') AS r, currentDatabase() AS db",
        '--format',
        'csv',
      ],
      capped,
    );
    expect(settings.stdout).toBe('t,r,db\n2,5,vaultstream\n');
    const rows = await runCli(['sql', 'SELECT number FROM numbers(10)'], capped);
    expect(rows.code).toBe(2);
    expect(rows.stderr).toMatch(/TOO_MANY_ROWS_OR_BYTES|Limit for result exceeded/);
    const t0 = Date.now();
    const long = await runCli(['sql', 'SELECT count() FROM numbers(1000000000000)'], capped);
    expect(long.stderr).toMatch(/TIMEOUT/);
    expect(Date.now() - t0).toBeLessThan(15_000);
    const empty = await runCli(['sql', 'SELECT * FROM vaultstream.vault_registry'], {
      VAULTSTREAM_DATA_DIR: join(dir, 'empty'),
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(
      /^vaultstream: STORE_UNAVAILABLE: UNKNOWN_DATABASE: .*the store in this data directory is empty: run vaultstream start with it first/,
    );
  }, 300_000);
});
