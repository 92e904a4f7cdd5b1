/**
 * The BI tools' database drivers, run against the SQL interface (test/integration/bi-drivers.test.ts):
 * clickhouse-connect (Python, Superset), clickhouse-go v2 (Go, Grafana's plugin) and the JDBC v2
 * driver (Java, DBeaver and Metabase) are small programs under test/drivers that
 * scripts/install-drivers.sh installs and builds; @clickhouse/client (JavaScript) runs in process.
 * Each takes a mode (connect, schema, query, parallel) and a JSON request, and answers JSON with
 * values as exact strings, which `canonical` brings to one form for comparison.
 */
import { execFile, execFileSync } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client';
import { ROOT } from './cli.ts';

export const DRIVERS_DIR =
  process.env.VAULTSTREAM_DRIVERS_DIR ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'vaultstream-drivers');

/** Runs scripts/install-drivers.sh (quick when everything is built); throws with its output on failure. */
export function installDrivers(): void {
  execFileSync('bash', [join(ROOT, 'scripts', 'install-drivers.sh')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 600_000,
  });
}

export type DriverName = 'python' | 'go' | 'java' | 'js';
export type Mode = 'connect' | 'schema' | 'query' | 'parallel';

/** A query in ClickHouse's {name:Type} parameter syntax; JDBC binds the parameters as `?`. */
export interface DriverQuery {
  id: string;
  sql: string;
  params?: Record<string, string>;
}
export interface DriverAnswer {
  id: string;
  columns?: string[];
  types?: string[];
  rows?: unknown[][];
  error?: string;
}
export interface DriverRequest {
  queries?: DriverQuery[];
  /** Tables whose columns the schema mode lists. */
  columnsOf?: string[];
  /** Connection-level settings (Grafana's custom settings). */
  settings?: Record<string, string>;
}

const JAVA = join(ROOT, 'test', 'drivers', 'java', 'target');
const COMMANDS: Record<Exclude<DriverName, 'js'>, string[]> = {
  python: [join(DRIVERS_DIR, 'venv', 'bin', 'python'), join(ROOT, 'test', 'drivers', 'python', 'driver.py')],
  go: [join(DRIVERS_DIR, 'driver-go')],
  java: ['java', '-cp', `${join(JAVA, 'classes')}:${join(JAVA, 'lib', '*')}`, 'vaultstream.DriverCheck'],
};

/** One run of a driver program (or the JS client): its parsed answer, or an error with its stderr. */
export async function runDriver(
  name: DriverName,
  mode: Mode,
  url: string,
  database: string,
  request: DriverRequest = {},
): Promise<any> {
  if (name === 'js') return runJs(mode, url, database, request);
  const [cmd, ...args] = COMMANDS[name];
  return new Promise((resolve, reject) => {
    const child = execFile(
      cmd,
      [...args, mode, url, database],
      { maxBuffer: 64 * 1024 * 1024, timeout: 180_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${name} ${mode}: ${err.message}\n${stderr.slice(-3000)}`));
        else resolve(JSON.parse(stdout));
      },
    );
    child.stdin?.end(JSON.stringify(request));
  });
}

/** @clickhouse/client as a Node service uses it: one client, JSON formats, query_params. */
async function runJs(mode: Mode, url: string, database: string, request: DriverRequest): Promise<any> {
  const client = createClient({ url, database, clickhouse_settings: request.settings as any });
  const strings = async (query: string) =>
    ((await (await client.query({ query, format: 'JSONCompactEachRow' })).json()) as string[][]).map(
      (r) => r[0],
    );
  const run = async (q: DriverQuery): Promise<DriverAnswer> => {
    try {
      const rs = await client.query({
        query: q.sql,
        query_params: q.params,
        format: 'JSONCompactEachRowWithNamesAndTypes',
        // Exact decimals: without it a Decimal(38, 18) arrives as a JS number.
        clickhouse_settings: { output_format_json_quote_decimals: 1 },
      });
      const [columns, types, ...rows] = (await rs.json()) as unknown[][];
      return { id: q.id, columns: columns as string[], types: types as string[], rows };
    } catch (e) {
      return { id: q.id, error: (e as Error).message };
    }
  };
  try {
    switch (mode) {
      case 'connect': {
        const ping = await client.ping();
        return { ping: ping.success, version: (await strings('SELECT version()'))[0] };
      }
      case 'schema': {
        const columns: Record<string, string[][]> = {};
        for (const t of request.columnsOf ?? []) {
          const rs = await client.query({ query: `DESCRIBE TABLE ${t}`, format: 'JSONEachRow' });
          columns[t] = ((await rs.json()) as { name: string; type: string }[]).map((c) => [c.name, c.type]);
        }
        return { databases: await strings('SHOW DATABASES'), tables: await strings('SHOW TABLES'), columns };
      }
      case 'query': {
        const out: DriverAnswer[] = [];
        for (const q of request.queries ?? []) out.push(await run(q));
        return out;
      }
      case 'parallel':
        return Promise.all((request.queries ?? []).map(run));
    }
  } finally {
    await client.close();
  }
}

/** `t` without its Nullable(...) and LowCardinality(...) wrappers. */
export function unwrapType(t: string): string {
  const m = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(t);
  return m ? unwrapType(m[1]) : t;
}

/** The arguments of a type such as Map(K, V) or Array(T), split at top-level commas. */
function typeArgs(t: string): string[] {
  const inner = t.slice(t.indexOf('(') + 1, -1);
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '(') depth++;
    else if (inner[i] === ')') depth--;
    else if (inner[i] === ',' && depth === 0) {
      out.push(inner.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(inner.slice(start).trim());
  return out;
}

const trimDecimal = (s: string) => {
  let out = s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
  if (out === '-0') out = '0';
  return out;
};

/**
 * A value of ClickHouse type `type` in one comparable form, whoever produced it (a driver's JSON,
 * or the server's own toString / toJSONString): integers and decimals as exact decimal strings,
 * floats as numbers, Date as YYYY-MM-DD, DateTime to the second and DateTime64(n) to n digits
 * (UTC), Map as an object, Array as an array, NULL as null.
 */
export function canonical(type: string, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  const t = unwrapType(type);
  if (/^U?Int\d+$/.test(t)) return BigInt(String(v)).toString();
  if (/^Decimal/.test(t)) return trimDecimal(String(v));
  if (/^Float/.test(t)) return Number(v);
  if (t === 'Date' || t === 'Date32') return String(v).slice(0, 10);
  if (t.startsWith('DateTime')) {
    const s = String(v)
      .replace('T', ' ')
      .replace(/Z$|[+-]\d\d:\d\d$/, '');
    const scale = t.startsWith('DateTime64') ? Number(/^DateTime64\((\d+)/.exec(t)?.[1] ?? 3) : 0;
    const frac = (s.slice(20) || '').padEnd(scale, '0').slice(0, scale);
    return scale ? `${s.slice(0, 19)}.${frac}` : s.slice(0, 19);
  }
  if (t.startsWith('Array(')) {
    const [inner] = typeArgs(t);
    return (v as unknown[]).map((x) => canonical(inner, x));
  }
  if (t.startsWith('Map(')) {
    const [k, val] = typeArgs(t);
    const entries = Object.entries(v as Record<string, unknown>).map(
      ([key, x]) => [String(canonical(k, key)), canonical(val, x)] as const,
    );
    return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  return String(v);
}

/** One row of every column type the views expose, at their extremes, with values the tests know. */
export const TYPE_LITERALS_SQL = `SELECT
  toInt256('-57896044618658097711785492504343953926634992332820282019728792003956564819968') AS int256_min,
  toUInt256('115792089237316195423570985008687907853269984665640564039457584007913129639935') AS uint256_max,
  toDecimal128('-12345678901234567890.123456789012345678', 18) AS decimal_38_18,
  toDate('2026-11-25') AS date,
  toDateTime('2026-11-25 12:34:56', 'UTC') AS datetime,
  toDateTime64('2026-11-25 12:34:56.789', 3, 'UTC') AS datetime64,
  toLowCardinality('ndev0') AS low_cardinality,
  CAST(NULL, 'Nullable(Int256)') AS nullable_null,
  CAST(42, 'Nullable(Int256)') AS nullable_value,
  map('deposit', 'done', 'mint', 'pending') AS map,
  CAST([1, 56, 98866], 'Array(UInt32)') AS array`;
