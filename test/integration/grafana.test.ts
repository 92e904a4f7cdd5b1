/**
 * The Grafana provisioning in deploy/grafana: the data source is the official ClickHouse
 * plugin as the read-only analyst user, every panel queries the provisioned data source,
 * reads only documented views (docs/views.md), and, with its macros and the `vault`
 * variable expanded for a fixed time range, returns rows on the devnet through the embedded
 * SQL interface (the same ClickHouse HTTP protocol Grafana's plugin speaks).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../support/cli.ts';
import {
  killServices,
  type Service,
  startService,
  stderrTail,
  waitDrained,
} from '../support/devnet-service.ts';
import { expandGrafanaSql } from '../support/grafana-macros.ts';

const GRAFANA = join(ROOT, 'deploy', 'grafana');
const dashboards = readdirSync(join(GRAFANA, 'dashboards'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ file: f, json: JSON.parse(readFileSync(join(GRAFANA, 'dashboards', f), 'utf8')) }));
const datasource = parse(
  readFileSync(join(GRAFANA, 'provisioning', 'datasources', 'clickhouse.yaml'), 'utf8'),
).datasources[0];
const documented = new Set(
  [...readFileSync(join(ROOT, 'docs', 'views.md'), 'utf8').matchAll(/^## (\w+)$/gm)].map((m) => m[1]),
);

interface PanelQuery {
  where: string;
  sql: string;
}
const queries: PanelQuery[] = dashboards.flatMap(({ file, json }) =>
  (json.panels as any[]).flatMap((p) =>
    (p.targets as any[]).map((t) => ({
      where: `${file} panel "${p.title}" ${t.refId}`,
      sql: t.rawSql as string,
    })),
  ),
);

describe('Grafana dashboards in deploy/grafana', () => {
  it('provision the official ClickHouse plugin over HTTP as the analyst user', () => {
    expect(datasource.type).toBe('grafana-clickhouse-datasource');
    expect(datasource.jsonData.protocol).toBe('http');
    expect(datasource.jsonData.defaultDatabase).toBe('vaultstream');
    const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'));
    const env = compose.services.grafana.environment;
    expect(env.GF_INSTALL_PLUGINS).toMatch(/grafana-clickhouse-datasource/);
    expect(env.CLICKHOUSE_USER).toBe('analyst');
    expect(env.CLICKHOUSE_HOST).toBe('clickhouse');
    expect(String(env.CLICKHOUSE_PORT)).toBe('8123');
  });

  it('every panel uses the provisioned data source and reads documented views only', () => {
    expect(queries.length).toBeGreaterThanOrEqual(7);
    for (const { json } of dashboards)
      for (const p of json.panels) {
        expect(p.datasource?.uid, p.title).toBe(datasource.uid);
        for (const t of p.targets) expect(t.datasource?.uid, p.title).toBe(datasource.uid);
      }
    for (const q of queries) {
      const tables = [...q.sql.matchAll(/vaultstream\.(\w+)/g)].map((m) => m[1]);
      expect(tables.length, q.where).toBeGreaterThan(0);
      for (const t of tables) expect(documented.has(t), `${q.where}: ${t} in docs/views.md`).toBe(true);
    }
  });
});

describe('every Grafana panel query returns rows on the devnet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vs-grafana-'));
  let svc: Service;
  let sqlUrl: string;
  afterAll(() => {
    killServices();
    // A killed service's analysts process exits when it sees its parent gone: it may still write.
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  });

  // JSONEachRow: the embedded interface writes FORMAT JSON as one document per result block
  // (two documents for a 3-row result), which no JSON parser accepts.
  const run = async (sql: string): Promise<any[]> => {
    const res = await fetch(`${sqlUrl}/`, { method: 'POST', body: `${sql}\nFORMAT JSONEachRow` });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${res.status}: ${text}\n${sql}`);
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l));
  };

  beforeAll(async () => {
    svc = await startService(join(dir, 'data'), { backfillDays: '10', liveIntervalMs: '0' });
    await waitDrained(svc);
    sqlUrl = await vi.waitFor(
      () => {
        const line = /vaultstream SQL (\S+)/.exec(svc.log.stdout);
        if (!line) throw new Error(`no SQL line on stdout yet; ${stderrTail(svc)}`);
        return line[1];
      },
      { timeout: 10_000, interval: 300 },
    );
  }, 300_000);

  it('expanded for a fixed range ending at the newest watermark, for every vault', async () => {
    // The devnet's chains run on their own clock: the range is the 30 days before the newest block.
    const [{ to }] = await run(
      'SELECT toUnixTimestamp(max(block_time)) AS to FROM vaultstream.chain_watermarks',
    );
    const range = { from: Number(to) - 30 * 86_400, to: Number(to) };
    const variable = dashboards[0].json.templating.list.find((v: any) => v.name === 'vault');
    const vaults = (await run(variable.query)).map((r) => r.slug as string);
    expect(vaults.sort()).toEqual(['ndev0', 'ndev1', 'ndev2']);
    const counts: Record<string, number> = {};
    for (const q of queries)
      for (const vault of vaults) {
        const sql = expandGrafanaSql(q.sql, range, { vault });
        expect(sql, q.where).not.toMatch(/\$|\[\[/);
        const rows = await run(sql);
        counts[`${q.where} ${vault}`] = rows.length;
        expect(rows.length, `${q.where} for ${vault}: rows`).toBeGreaterThan(0);
      }
    console.log(counts);
  }, 120_000);

  it('the time filter applies: a range before the history returns no rows', async () => {
    const range = { from: 0, to: 86_400 };
    const filtered = queries.filter(
      (q) => q.sql.includes('$__timeFilter(day)') || q.sql.includes('$__timeFilter(n.day)'),
    );
    expect(filtered.length).toBeGreaterThanOrEqual(6);
    for (const q of filtered)
      expect(await run(expandGrafanaSql(q.sql, range, { vault: 'ndev0' })), q.where).toEqual([]);
  }, 60_000);
});
