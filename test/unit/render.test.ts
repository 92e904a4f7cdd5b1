import { describe, expect, it } from 'vitest';
import { listMigrations, RETIRED_VERSIONS } from '../../views/migrate.ts';
import { listPlainViews } from '../../views/plain.ts';
import { renderStatements, splitStatements } from '../../views/render.ts';

describe('migration rendering', () => {
  const all = listMigrations();

  it('finds the ordered migration files', () => {
    expect(all.map((m) => m.version)).toEqual([...all.map((m) => m.version)].sort((a, b) => a - b));
    expect(all.length).toBeGreaterThanOrEqual(3);
    // One file per number: the ledger keys by number, so two files of one number break a restart.
    expect(new Set(all.map((m) => m.version)).size).toBe(all.length);
  });

  it('takes no retired number (a store migrated before holds it in its ledger)', () => {
    for (const m of all) expect(RETIRED_VERSIONS, m.name).not.toContain(m.version);
  });

  it('keeps plain views out of the versioned migrations (one definition each, in views/plain)', () => {
    for (const m of all)
      for (const s of splitStatements(m.sql))
        expect(s.slice(0, 80)).not.toMatch(/^CREATE (OR REPLACE )?VIEW/);
    const views = listPlainViews();
    expect(views.length).toBeGreaterThan(40);
    for (const v of views) {
      const defs = splitStatements(v.sql).filter((s) => /^CREATE (OR REPLACE )?VIEW/.test(s));
      expect(defs.length, v.name).toBe(1);
      expect(defs[0]).toMatch(new RegExp(`^CREATE OR REPLACE VIEW \\{\\{db\\}\\}\\.${v.name} `));
    }
  });

  it('orders each plain view after the views it reads', () => {
    const order = listPlainViews().map((v) => v.name);
    for (const v of listPlainViews())
      for (const r of v.reads)
        expect(order.indexOf(r), `${v.name} reads ${r}`).toBeLessThan(order.indexOf(v.name));
    expect(listPlainViews().find((v) => v.name === 'vault_tvl_daily')?.reads).toContain('tvl_chain_daily');
  });

  it('renders a single node with no placeholders left', () => {
    for (const m of [...all, ...listPlainViews()])
      for (const s of renderStatements(m.sql, { database: 'vs', cluster: '' })) {
        expect(s).not.toMatch(/\{\{|\}\}|ON CLUSTER|Replicated/);
        expect(s).toMatch(/\bvs\./);
      }
  });

  it('gives every table and column a COMMENT', () => {
    for (const m of [...all, ...listPlainViews()])
      for (const s of splitStatements(m.sql)) {
        if (!/^CREATE (TABLE|VIEW)/.test(s)) continue;
        // A SQL string literal: any characters but a quote, or a doubled quote (`chain''s`).
        expect(s, s.slice(0, 80)).toMatch(/COMMENT '(?:[^']|'')+'\s*$/);
        if (/^CREATE TABLE/.test(s)) {
          const cols = s
            .slice(s.indexOf('(') + 1, s.lastIndexOf(') ENGINE'))
            .split('\n')
            .map((l) => l.trim())
            .filter((l) => /^[a-z_0-9]+ [A-Z]/.test(l) && !l.startsWith('INDEX'));
          for (const c of cols) expect(c, c).toMatch(/COMMENT '/);
        }
      }
  });

  it('renders cluster mode: ON CLUSTER, Replicated engines, local tables, Distributed twins, MVs to locals', () => {
    const sql = all.map((m) => m.sql).join('\n');
    const out = renderStatements(sql, { database: 'vs', cluster: 'c1' });
    for (const v of listPlainViews()) out.push(...renderStatements(v.sql, { database: 'vs', cluster: 'c1' }));
    const create = out.find((s) => s.startsWith('CREATE TABLE IF NOT EXISTS vs.transfers_raw_local'));
    expect(create).toMatch(/ON CLUSTER c1/);
    expect(create).toMatch(/ENGINE = ReplicatedReplacingMergeTree\(ver, removed\)/);
    expect(out).toContain(
      'CREATE TABLE IF NOT EXISTS vs.transfers_raw ON CLUSTER c1 AS vs.transfers_raw_local ENGINE = Distributed(c1, vs, transfers_raw_local, cityHash64(vault))',
    );
    const mv = out.find((s) => s.startsWith('CREATE MATERIALIZED VIEW IF NOT EXISTS vs.balance_deltas_mv'));
    expect(mv).toMatch(/TO vs\.balance_deltas_local/);
    expect(mv).toMatch(/FROM vs\.transfers_raw_local/);
    const view = out.find((s) => s.startsWith('CREATE OR REPLACE VIEW vs.balances'));
    expect(view).toMatch(/FROM vs\.balance_deltas /);
    expect(view).toMatch(/ON CLUSTER c1/);
  });
});
