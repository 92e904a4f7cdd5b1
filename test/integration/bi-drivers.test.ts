/**
 * The data team's and BI's real tools against the embedded SQL interface of a live
 * `vaultstream start` on the devnet, each through its own driver (test/support/drivers.ts):
 * Superset's clickhouse-connect, @clickhouse/client, Grafana's clickhouse-go v2 (Native with
 * client_protocol_version=54460, its row limit and custom settings) and the JDBC v2 driver of
 * DBeaver and Metabase (compress=1 answers in ClickHouse's compressed blocks). Each connects as its
 * tool does, browses the schema as its tool does, runs a parametrized query, reads every column
 * type the documented views expose with the values the engine itself prints, and gets 8 queries
 * sent at once all answered. Every panel of the Grafana dashboards runs through clickhouse-go,
 * and every docs/queries file through the interface. The drivers are installed by
 * scripts/install-drivers.sh (which `npm test` runs; the suite runs it too, quick once built).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROOT } from '../support/cli.ts';
import { getJson, killServices, type Service, startService, stderrTail } from '../support/devnet-service.ts';
import {
  canonical,
  type DriverAnswer,
  type DriverName,
  type DriverQuery,
  installDrivers,
  runDriver,
  TYPE_LITERALS_SQL,
} from '../support/drivers.ts';
import { expandGrafanaSql } from '../support/grafana-macros.ts';
import { canonicalRows, post, type Reference, reference } from '../support/sql-reference.ts';

const DB = 'vaultstream';
const DRIVERS: { name: DriverName; tool: string }[] = [
  { name: 'python', tool: 'Superset (clickhouse-connect + SQLAlchemy)' },
  { name: 'go', tool: "Grafana's ClickHouse plugin (clickhouse-go v2)" },
  { name: 'java', tool: 'DBeaver / Metabase (JDBC v2)' },
  { name: 'js', tool: '@clickhouse/client' },
];

/** The type families the documented views expose, each read by every driver. */
const FAMILIES: Record<string, (t: string) => boolean> = {
  Int256: (t) => /(^|\()Int256\)*$/.test(t),
  UInt256: (t) => /UInt256/.test(t),
  Decimal: (t) => /Decimal\(/.test(t),
  Date: (t) => /(^|\()Date\)*$/.test(t),
  DateTime: (t) => /DateTime(64)?\(/.test(t),
  LowCardinality: (t) => t.startsWith('LowCardinality('),
  Nullable: (t) => t.startsWith('Nullable('),
  Map: (t) => t.startsWith('Map('),
  Array: (t) => t.startsWith('Array('),
};

/** Extremes with values known here, not from the server: each driver must read them exactly. */
const LITERALS = {
  sql: TYPE_LITERALS_SQL,
  row: [
    '-57896044618658097711785492504343953926634992332820282019728792003956564819968',
    '115792089237316195423570985008687907853269984665640564039457584007913129639935',
    '-12345678901234567890.123456789012345678',
    '2026-11-25',
    '2026-11-25 12:34:56',
    '2026-11-25 12:34:56.789',
    'ndev0',
    null,
    '42',
    { deposit: 'done', mint: 'pending' },
    ['1', '56', '98866'],
  ],
};

/** Grafana's data source custom settings, as an operator sets them (the plugin's query timeout). */
const GRAFANA_SETTINGS = { max_execution_time: '60' };
let watermark = 0;
/** The parameters of docs/queries/api-*.sql on this devnet. */
const docParams = (): Record<string, string> => ({
  slug: 'ndev0',
  now: String(watermark),
  chainId: '98866',
  from: String(watermark - 30 * 86_400),
  to: String(watermark),
  start: new Date((watermark - 30 * 86_400) * 1000).toISOString().slice(0, 10),
  end: new Date(watermark * 1000).toISOString().slice(0, 10),
});

const dir = mkdtempSync(join(tmpdir(), 'vs-bi-drivers-'));
let svc: Service;
let url = '';
let documented: string[];
/** One query per documented view, picked to cover FAMILIES. */
let typeReads: DriverQuery[];
/** docs/queries 01, 02 and 04..09: the 8 queries sent at once. */
let concurrent: DriverQuery[];

afterAll(() => {
  killServices();
  // A killed service's analysts process exits when it sees its parent gone: it may still write.
  rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

const rowsOf = async (sql: string) =>
  (await post(url, `${sql}\nFORMAT JSONEachRow`))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

/** For each family, a documented view with a non-empty column of it; one read per view. */
async function pickTypeReads() {
  const cols: { table: string; name: string; type: string }[] = await rowsOf(
    `SELECT table, name, type FROM system.columns WHERE database = '${DB}' ORDER BY table, position`,
  );
  const byTable = new Map<string, { name: string; type: string; families: string[] }[]>();
  for (const c of cols) {
    if (!documented.includes(c.table) || c.type.includes('AggregateFunction')) continue;
    const families = Object.keys(FAMILIES).filter((f) => FAMILIES[f](c.type));
    if (families.length > 0) byTable.set(c.table, [...(byTable.get(c.table) ?? []), { ...c, families }]);
  }
  // The views that cover most families first; a column counts only when it holds a value.
  const tables = [...byTable].sort(
    ([, a], [, b]) => new Set(b.flatMap((c) => c.families)).size - new Set(a.flatMap((c) => c.families)).size,
  );
  const covered = new Set<string>();
  const reads: typeof typeReads = [];
  for (const [table, columns] of tables) {
    const useful = columns.filter((c) => c.families.some((f) => !covered.has(f)));
    if (useful.length === 0) continue;
    const counts = (
      await rowsOf(`SELECT ${useful.map((c) => `countIf(\`${c.name}\` IS NOT NULL) AS \`${c.name}\``).join(', ')}
        FROM ${DB}.${table}`)
    )[0];
    const filled = useful.filter((c) => Number(counts[c.name]) > 0);
    if (filled.length === 0) continue;
    for (const c of filled) for (const f of c.families) covered.add(f);
    const sql = `SELECT ${filled.map((c) => `\`${c.name}\``).join(', ')} FROM ${DB}.${table}`;
    reads.push({ id: table, sql });
  }
  expect([...covered].sort(), 'every type family in a documented view with values').toEqual(
    Object.keys(FAMILIES).sort(),
  );
  return reads;
}

const docFiles = readdirSync(join(ROOT, 'docs', 'queries'))
  .filter((f) => f.endsWith('.sql'))
  .sort();
const docSql = (f: string) => readFileSync(join(ROOT, 'docs', 'queries', f), 'utf8');

beforeAll(async () => {
  installDrivers();
  documented = [...readFileSync(join(ROOT, 'docs', 'views.md'), 'utf8').matchAll(/^## (\w+)$/gm)].map(
    (m) => m[1],
  );
  svc = await startService(join(dir, 'data'), { backfillDays: '10', liveIntervalMs: '5000' });
  // Live ticks keep the heads and the bus moving: the backfill is in once every chain is live.
  await vi.waitFor(
    async () => {
      const s = await getJson(svc, '/status');
      const phases = (s.ingest?.evm ?? []).map((p: any) => p.phase);
      expect(phases, `every chain live; ${stderrTail(svc)}`).toEqual(['live', 'live', 'live']);
    },
    { timeout: 240_000, interval: 500 },
  );
  url = await vi.waitFor(
    () => {
      const line = /vaultstream SQL (\S+)/.exec(svc.log.stdout);
      if (!line) throw new Error(`no SQL line on stdout yet; ${stderrTail(svc)}`);
      return line[1];
    },
    { timeout: 10_000, interval: 300 },
  );
  watermark = Number(
    (await rowsOf(`SELECT toUnixTimestamp(max(block_time)) AS t FROM ${DB}.chain_watermarks`))[0].t,
  );
  // The mint flows (the views' only Map values) are booked as the live ticks make them.
  await vi.waitFor(
    async () =>
      expect(Number((await rowsOf(`SELECT count() AS n FROM ${DB}.mint_flows`))[0].n)).toBeGreaterThan(0),
    { timeout: 120_000, interval: 500 },
  );
  typeReads = await pickTypeReads();
  concurrent = docFiles
    .filter((name) => /^0[124-9]-/.test(name))
    .map((f) => ({ id: f, sql: docSql(f).replace(/;\s*$/, '') }));
}, 900_000);

/**
 * The driver's answers to `queries` equal the engine's own (reference()), value for value. The
 * devnet ticks live (its mint flows are booked only then), so a view can change between the two
 * reads: on a difference both are read again, a few times; an error fails at once.
 */
async function expectSameAsEngine(
  name: DriverName,
  mode: 'query' | 'parallel',
  queries: DriverQuery[],
  settings: Record<string, string> | undefined,
) {
  for (let attempt = 1; ; attempt++) {
    const answers = (await runDriver(name, mode, url, DB, { settings, queries })) as DriverAnswer[];
    expect(answers.map((a) => a.id)).toEqual(queries.map((q) => q.id));
    for (const [i, q] of queries.entries())
      expect(answers[i].error, `${name}: ${q.id}: ${q.sql}`).toBeUndefined();
    const refs: Reference[] = [];
    for (const q of queries) refs.push(await reference(url, q.sql));
    const got = answers.map((a, i) => ({
      columns: a.columns,
      rows: canonicalRows(refs[i].types, a.rows ?? []),
    }));
    const same = got.every((g, i) => isDeepStrictEqual(g, { columns: refs[i].columns, rows: refs[i].rows }));
    if (same || attempt === 5) {
      for (const [i, q] of queries.entries()) {
        expect(got[i].columns, `${name}: ${q.id} columns`).toEqual(refs[i].columns);
        expect(got[i].rows, `${name}: ${q.id} values`).toEqual(refs[i].rows);
      }
      return;
    }
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

describe.each(DRIVERS)('$tool', ({ name, tool }) => {
  const settings = name === 'go' ? GRAFANA_SETTINGS : undefined;
  it(`connects as ${tool} does`, async () => {
    const out = await runDriver(name, 'connect', url, DB, { settings });
    expect(out.ping).toBe(true);
    expect(out.version).toMatch(/^\d+\.\d+/);
  }, 120_000);

  it('lists databases, tables and columns as its tool browses a schema', async () => {
    const columnsOf = ['vault_daily', 'mint_flows', 'holder_values'];
    const out = await runDriver(name, 'schema', url, DB, { columnsOf, settings });
    expect(out.databases).toContain(DB);
    for (const t of documented) expect(out.tables, `${t} listed`).toContain(t);
    for (const t of columnsOf) {
      const want: { name: string; type: string }[] = await rowsOf(
        `SELECT name, type FROM system.columns WHERE database = '${DB}' AND table = '${t}' ORDER BY position`,
      );
      expect(
        out.columns[t].map((c: string[]) => c[0]),
        `${t} columns`,
      ).toEqual(want.map((c) => c.name));
      // SQLAlchemy gives its own type objects; the other drivers give ClickHouse's type names.
      if (name !== 'python')
        expect(
          out.columns[t].map((c: string[]) => c[1]),
          `${t} types`,
        ).toEqual(want.map((c) => c.type));
    }
  }, 180_000);

  it('runs a parametrized query', async () => {
    const [a] = (await runDriver(name, 'query', url, DB, {
      settings,
      queries: [
        {
          id: 'param',
          sql: `SELECT slug, name, decimals FROM ${DB}.vault_registry WHERE slug = {slug:String}`,
          params: { slug: 'ndev1' },
        },
      ],
    })) as DriverAnswer[];
    expect(a.error).toBeUndefined();
    expect(a.rows?.map((r) => r.map(String))).toEqual([['ndev1', 'Devnet Vault 1', '6']]);
  }, 120_000);

  it('reads every column type the views expose, with the right values', async () => {
    const [lit] = (await runDriver(name, 'query', url, DB, {
      settings,
      queries: [{ id: 'literals', sql: LITERALS.sql }],
    })) as DriverAnswer[];
    expect(lit.error, 'literals').toBeUndefined();
    const types = (await reference(url, LITERALS.sql)).types;
    expect(lit.rows?.map((r) => r.map((v, i) => canonical(types[i], v)))).toEqual([
      LITERALS.row.map((v, i) => canonical(types[i], v)),
    ]);
    await expectSameAsEngine(name, 'query', typeReads, settings);
  }, 180_000);

  it('gets 8 queries sent at once all answered', async () => {
    expect(concurrent).toHaveLength(8);
    // Answered, each with its own result: its columns, and rows where the engine has some. (Their
    // values move with the live ticks while 8 queries wait their turn: the values of every type
    // are compared above.)
    const answers = (await runDriver(name, 'parallel', url, DB, {
      settings,
      queries: concurrent,
    })) as DriverAnswer[];
    expect(answers.map((a) => a.id)).toEqual(concurrent.map((q) => q.id));
    for (const [i, q] of concurrent.entries()) {
      const a = answers[i];
      expect(a.error, `${name}: ${q.id}`).toBeUndefined();
      const ref = await reference(url, q.sql);
      expect(a.columns, `${name}: ${q.id} columns`).toEqual(ref.columns);
      if (ref.rows.length > 0) expect(a.rows?.length, `${name}: ${q.id} rows`).toBeGreaterThan(0);
    }
  }, 180_000);
});

describe('the Grafana dashboards through clickhouse-go with the plugin settings', () => {
  it('every panel of deploy/grafana answers rows for every vault', async () => {
    const boards = readdirSync(join(ROOT, 'deploy', 'grafana', 'dashboards')).filter((f) =>
      f.endsWith('.json'),
    );
    const range = { from: watermark - 30 * 86_400, to: watermark };
    const queries: DriverQuery[] = [];
    for (const f of boards) {
      const json = JSON.parse(readFileSync(join(ROOT, 'deploy', 'grafana', 'dashboards', f), 'utf8'));
      for (const p of json.panels as any[])
        for (const t of p.targets as any[])
          for (const vault of ['ndev0', 'ndev1', 'ndev2'])
            queries.push({
              id: `${f} "${p.title}" ${t.refId} ${vault}`,
              sql: expandGrafanaSql(t.rawSql, range, { vault }),
            });
    }
    expect(queries.length).toBeGreaterThanOrEqual(21);
    const answers = (await runDriver('go', 'query', url, DB, {
      settings: GRAFANA_SETTINGS,
      queries,
    })) as DriverAnswer[];
    for (const a of answers) {
      expect(a.error, a.id).toBeUndefined();
      expect(a.rows?.length, `${a.id} rows`).toBeGreaterThan(0);
    }
  }, 300_000);
});

describe('docs/queries through the interface', () => {
  it('every example and parity query runs as written, with its parameters', async () => {
    const params = docParams();
    const queries = docFiles.map((f) => {
      const sql = docSql(f).replace(/;\s*$/, '');
      const used = [...sql.matchAll(/\{(\w+):[^}]+\}/g)].map((m) => m[1]);
      return { id: f, sql, params: Object.fromEntries(used.map((p) => [p, params[p]])) };
    });
    const answers = (await runDriver('js', 'query', url, DB, { queries })) as DriverAnswer[];
    const counts: Record<string, number> = {};
    for (const a of answers) {
      expect(a.error, a.id).toBeUndefined();
      counts[a.id] = a.rows?.length ?? 0;
    }
    // Each documents rows the devnet has (07 lists failed redemptions: the devnet fails none).
    for (const [f, n] of Object.entries(counts))
      if (f !== '07-failed-redemptions.sql') expect(n, `${f} rows`).toBeGreaterThan(0);
  }, 300_000);
});
