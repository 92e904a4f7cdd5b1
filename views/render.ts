/**
 * Renders the migration files for a target: `{{db}}`, `{{on_cluster}}` and `{{solana_chain_id}}`
 * (the chain id the service gives Solana, schemas/families.ts) always;
 * in cluster mode also Replicated engines, `_local` tables with a Distributed table
 * under the original name, and materialized views writing to the local tables.
 */
import { SOLANA_CHAIN_ID } from '../schemas/families.ts';

export interface RenderTarget {
  database: string;
  /** Cluster name; empty for a single node (and for chDB). */
  cluster: string;
  /**
   * Further `{{name}}` values: the settle's write (views/settle/loop/write.sql) takes its table,
   * the table's columns and its target's rows so; the migrations take none.
   */
  vars?: Readonly<Record<string, string>>;
}

const TABLE_RE = /CREATE TABLE IF NOT EXISTS \{\{db\}\}\.(\w+) \{\{on_cluster\}\}/g;
const ENGINE_RE = /ENGINE = (\w*MergeTree)(\([^)]*\))?/;

/** Splits a SQL file into statements (`;` at a line end), dropping comment-only lines. */
export function splitStatements(sql: string): string[] {
  const body = sql
    .split('\n')
    .filter((l) => !/^\s*--/.test(l))
    .join('\n');
  return body
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Sharding key for a table's Distributed twin: by vault when it has one, else random. */
function shardingKey(stmt: string): string {
  if (/\bvault LowCardinality/.test(stmt)) return 'cityHash64(vault)';
  if (/\bsignature String/.test(stmt)) return 'cityHash64(signature)';
  return 'rand()';
}

/** The statement with each `{{name}}` as `vars` gives it; a name it does not give is an error. */
function fill(stmt: string, vars: Record<string, string>): string {
  return stmt.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    if (!Object.hasOwn(vars, name))
      throw new Error(`unknown placeholder {{${name}}} in: ${stmt.slice(0, 120)}`);
    return vars[name];
  });
}

export function renderStatements(sql: string, target: RenderTarget): string[] {
  const cluster = target.cluster;
  const onCluster = cluster ? `ON CLUSTER ${cluster}` : '';
  const stmts = splitStatements(sql);
  const localTables = new Set<string>();
  if (cluster) for (const s of stmts) for (const m of s.matchAll(TABLE_RE)) localTables.add(m[1]);
  const out: string[] = [];
  for (const s of stmts) {
    let r = s;
    const table = /CREATE TABLE IF NOT EXISTS \{\{db\}\}\.(\w+)/.exec(s)?.[1];
    if (cluster) {
      // Every reference to a table of this file from an MV or a CREATE TABLE goes to its local part;
      // plain views keep reading the Distributed table under the original name.
      const isMv = /^CREATE MATERIALIZED VIEW/.test(s);
      if (table || isMv)
        for (const t of localTables)
          r = r.replace(new RegExp(`\\{\\{db\\}\\}\\.${t}\\b`, 'g'), `{{db}}.${t}_local`);
      r = r.replace(
        ENGINE_RE,
        (_m, engine: string, args?: string) => `ENGINE = Replicated${engine}${args ?? ''}`,
      );
    }
    r = fill(r, {
      ...target.vars,
      db: target.database,
      on_cluster: onCluster,
      solana_chain_id: String(SOLANA_CHAIN_ID),
    });
    // A column added to a table (created by an earlier file) goes to its local part too, first;
    // a storage setting only to the local part (a Distributed table stores nothing).
    if (cluster && /^ALTER TABLE \S+ .*\bMODIFY SETTING\b/s.test(r)) {
      out.push(r.replace(/^ALTER TABLE (\S+)/, 'ALTER TABLE $1_local'));
      continue;
    }
    if (cluster && /^ALTER TABLE \S+ .*\bADD COLUMN\b/s.test(r))
      out.push(r.replace(/^ALTER TABLE (\S+)/, 'ALTER TABLE $1_local'));
    out.push(r);
    if (cluster && table) {
      out.push(
        `CREATE TABLE IF NOT EXISTS ${target.database}.${table} ${onCluster} AS ${target.database}.${table}_local ` +
          `ENGINE = Distributed(${cluster}, ${target.database}, ${table}_local, ${shardingKey(s)})`,
      );
    }
  }
  return out;
}
