/**
 * The generated adversarial suite (test/support/sql-adversary.ts): every forbidden object (each
 * system table the interface does not list, each table function it does not list, the functions
 * of the categories it does not allow and those that show the server, other databases, the path
 * columns) in every syntactic position, through the HTTP interface (every statement) and
 * `vaultstream sql` (cli/sql.ts's session, a deterministic tenth of them, and a few through
 * the command itself). Each must be refused with 4xx and ClickHouse's error body, and no answer
 * may hold a path of this machine, the victim file's contents, another user's secret, or reach
 * the URL server. Before the suite a user's failed query leaves a secret in the engine's errors.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { openSql, type SqlSession } from '../../cli/sql.ts';
import { type Config, parseConfig } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { createLogger } from '../../core/log.ts';
import { createStore, type Store } from '../../store/client.ts';
import { OTHER_FUNCTIONS, SYSTEM_TABLES, TABLE_FUNCTIONS } from '../../store/read-only-rules.ts';
import { runCli } from '../support/cli.ts';
import { adversarialStatements, forbiddenObjects } from '../support/sql-adversary.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-adversary-'));
const victim = join(dir, 'victim.txt');
const SECRET = 'victim-contents-7d1f0c';
const OTHER_USER_SECRET = 'AKIA1234SECRET-adversary';
let cfg: Config;
let store: Store;
let http: SqlHttp;
let cli: SqlSession;
let server: Server;
let hits = 0;
let statements: { object: string; sql: string }[] = [];

beforeAll(async () => {
  writeFileSync(victim, `${SECRET}\n`);
  server = createServer((_req, res) => {
    hits++;
    res.end(`${SECRET}\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/x`;
  cfg = parseConfig({ dataDir: join(dir, 'data') });
  store = await createStore(cfg);
  await store.command(`CREATE DATABASE IF NOT EXISTS ${store.database}`);
  await store.command(`CREATE TABLE ${store.database}.t (id UInt32) ENGINE = MergeTree ORDER BY id`);
  const names = async (sql: string) => (await store.query<{ name: string }>(sql)).map((r) => r.name);
  const objects = forbiddenObjects({
    systemTables: await names("SELECT name FROM system.tables WHERE database = 'system'"),
    tableFunctions: await names('SELECT name FROM system.table_functions'),
    categoryFunctions: (
      await names(
        "SELECT name FROM system.functions WHERE alias_to = '' AND arrayExists(c -> c IN ('Introspection', 'Internal', 'Dictionary', 'Embedded Dictionary', 'Machine Learning', 'AI'), splitByString(', ', categories))",
      )
    ).filter((n) => !OTHER_FUNCTIONS.has(n)),
    allowedSystem: SYSTEM_TABLES,
    allowedTableFunctions: TABLE_FUNCTIONS,
    victim,
    url,
  });
  statements = adversarialStatements(objects);
  const settings = { ...cfg.sql, http: { ...cfg.sql.http, port: 0, maxQueuedQueries: 64 } };
  http = await startSqlHttp({ store, log: createLogger('silent'), settings });
  cli = await openSql(store, cfg.sql);
  // Another user's query fails with a secret in its text: the engine's errors hold it (if it keeps any).
  await fetch(`${http.url}/?query=${encodeURIComponent(`SELECT toUInt64('${OTHER_USER_SECRET}')`)}`);
}, 180_000);

afterAll(async () => {
  await http?.close();
  await cli?.close();
  await store?.close();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

/** What an answer or an error must never hold: the secrets, and any path the statement itself does not name. */
function leaks(text: string, sql = ''): string | undefined {
  for (const secret of [SECRET, OTHER_USER_SECRET]) if (text.includes(secret)) return secret;
  for (const [path] of text.matchAll(/(?:\/[\w.@+-]+){2,}/g)) if (!sql.includes(path)) return path;
  return undefined;
}

/** Runs `items` through `fn`, `width` at a time. */
async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/** A deterministic tenth of the statements (by their text's hash). */
const sample = (s: { sql: string }) => createHash('sha1').update(s.sql).digest()[0] % 10 === 0;

describe('generated adversarial statements', () => {
  it('are at least 10,000, over every forbidden object and position', () => {
    expect(statements.length).toBeGreaterThanOrEqual(10_000);
    expect(new Set(statements.map((s) => s.object)).size).toBeGreaterThan(300);
  });

  it('through HTTP: every one refused (4xx, an error body), nothing of the object in any answer', async () => {
    const letThrough: string[] = [];
    const leaked: string[] = [];
    const statuses = new Map<number, number>();
    await pool(statements, 4, async ({ object, sql }) => {
      const res = await fetch(`${http.url}/`, { method: 'POST', body: sql });
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (
        res.status < 400 ||
        res.status >= 500 ||
        !/^Code: \d+\. DB::Exception: .+\(\w+\) \(version /s.test(text)
      )
        letThrough.push(`${object}: ${res.status} ${sql} => ${text.slice(0, 160)}`);
      const leak = leaks(text, sql);
      if (leak) leaked.push(`${object}: ${sql} => ${leak}`);
    });
    expect(letThrough.slice(0, 20)).toEqual([]);
    expect(leaked.slice(0, 20)).toEqual([]);
    expect([...statuses.keys()].every((s) => s >= 400 && s < 500)).toBe(true);
    expect(hits).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe(`${SECRET}\n`);
  }, 900_000);

  it('through vaultstream sql: every sampled one refused with a clear error, nothing of the object in it', async () => {
    const picked = statements.filter(sample);
    expect(picked.length).toBeGreaterThan(1000);
    const letThrough: string[] = [];
    await pool(picked, 1, async ({ object, sql }) => {
      try {
        const out = await cli.run(sql, { format: 'json' });
        letThrough.push(`${object}: ran ${sql} => ${String(out).slice(0, 120)}`);
      } catch (err) {
        const ok =
          err instanceof VaultstreamError &&
          ['READ_ONLY', 'BAD_INPUT', 'SQL_SYNTAX', 'TIMEOUT'].includes(err.code) &&
          err.message.length > 10;
        const text = err instanceof Error ? err.message : String(err);
        if (!ok || leaks(text, sql)) letThrough.push(`${object}: ${sql} => ${text.slice(0, 160)}`);
      }
    });
    expect(letThrough.slice(0, 20)).toEqual([]);
    expect(hits).toBe(0);
  }, 900_000);

  it('through the vaultstream sql command: refused, exit 2, no path, nothing written', async () => {
    const env = { VAULTSTREAM_DATA_DIR: join(dir, 'cli-data') };
    expect((await runCli(['sql', '--write', 'CREATE DATABASE IF NOT EXISTS vaultstream'], env)).code).toBe(0);
    // One statement per kind of position, over the objects sql-findings.test.ts uses, and two that write a file.
    const few = [
      "DESCRIBE (SELECT 1 LIMIT (SELECT toString(groupArray((name, value))) FROM system.server_settings WHERE value LIKE '%/%'))",
      `SELECT * FROM file('${victim}', 'LineAsString')`,
      'SELECT x FROM (SELECT data_paths AS x FROM system.tables)',
      // What the command must not write (the check below).
      `SELECT 1 INTO OUTFILE '${join(dir, 'written.txt')}'`,
      `INSERT INTO FUNCTION file('${join(dir, 'written.txt')}', 'TSV') SELECT 1`,
    ];
    for (const sql of few) {
      const res = await runCli(['sql', sql], env);
      expect([sql, res.code]).toEqual([sql, 2]);
      expect(res.stderr).toMatch(/^vaultstream: (READ_ONLY|BAD_INPUT|SQL_SYNTAX): /);
      expect(leaks(res.stderr + res.stdout, sql)).toBeUndefined();
    }
    expect(existsSync(join(dir, 'written.txt'))).toBe(false);
  }, 600_000);
});
