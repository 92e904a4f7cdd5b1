/**
 * The analysts' engine: the chDB of the analysts' process (api/sql/analysts-main.ts), whose only
 * data is a read-only copy of the service's database (store/read-only-replica.ts). What its
 * queries may reach and how long they may run are the engine's own rules, set before the first
 * analyst query, so that no query text can change them:
 *
 * - One user. chDB signs every connection in as `default`; its users file (written here) grants
 *   reads of the copied databases and the system tables left, and the DDL the refresh needs, but
 *   no source (files, URLs, other servers, `executable`...), no dictionary and no introspection:
 *   `file()`, `url()`, `remote()`, `s3()` are ACCESS_DENIED whatever the query says.
 * - Caps as the profile's constraints: a statement may lower max_execution_time, max_result_rows,
 *   max_result_bytes, max_memory_usage and max_threads, never above the server's cap nor to 0
 *   ("no limit"): the engine refuses (SETTING_CONSTRAINT_VIOLATION). The parser's limits cannot
 *   be changed at all.
 * - Analysts' connections are `readonly = 2`: reads only, and `readonly` itself cannot change.
 * - At start, every system table but SYSTEM_TABLES and those the schema views read is dropped
 *   (the engine keeps the system database in memory, so this takes them out of this process
 *   only: the logs, other queries, errors, disks, server settings, stack traces), and the
 *   `default` database (chDB's overlay that reads files by their name) is replaced by an empty
 *   one.
 *
 * Measured on chdb 3.4.0 (libchdb 26.7): chDB reads the users file but not the server config's
 * `access_control_improvements`, so grants cannot hide system tables
 * (select_from_system_db_requires_grant is not read), a constraint cannot be made
 * changeable_in_readonly, and one connection cannot act as another user (no impersonation):
 * hence `readonly = 2` and the dropped tables. The users file and the server config are read
 * once per process, by its first connection (the admin's).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CAP_SETTINGS, type QueryLimits } from './read-only.ts';
import { OTHER_DATABASES, SYSTEM_TABLES } from './read-only-rules.ts';

/** The database the refresh attaches a new copy of each table in before it swaps it in. */
export const INCOMING_DATABASE = '_incoming';

export interface EngineFiles {
  /** `--config-file` of the admin connection, the process's first. */
  config: string;
}

/** The lowest value of each cap a statement may set: none is 0, which the engine reads as no limit. */
const CAP_MIN: Record<keyof QueryLimits, string> = {
  maxExecutionTimeSeconds: '0.001',
  maxResultRows: '1',
  maxResultBytes: '1',
  maxMemoryUsageBytes: '1048576',
  maxThreads: '1',
};

/** Settings no statement may change (the parser's bounds, what may run). */
const FIXED_SETTINGS: Record<string, string> = {
  max_query_size: '16777216',
  max_ast_elements: '50000',
  max_expanded_ast_elements: '500000',
  max_ast_depth: '1000',
  max_parser_depth: '1000',
  max_parser_backtracks: '1000000',
  allow_introspection_functions: '0',
  allow_ddl: '1',
};

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Writes the engine's server config and users file under `dir` (the analysts' process's own). */
export function writeEngineFiles(
  dir: string,
  opts: {
    served: string;
    limits: QueryLimits;
    maxServerMemoryBytes: number;
    /** Every setting the engine has (the service's engine is the same build). */
    settings: string[];
    /** Those a statement may set (the interface's list; the caps are bounded, not fixed). */
    changeable: Set<string>;
  },
): EngineFiles {
  mkdirSync(dir, { recursive: true });
  const { served, limits } = opts;
  const keys = Object.keys(CAP_SETTINGS) as (keyof QueryLimits)[];
  const defaults = [
    ...keys.map((k) => `<${CAP_SETTINGS[k]}>${limits[k]}</${CAP_SETTINGS[k]}>`),
    ...Object.entries(FIXED_SETTINGS).map(([k, v]) => `<${k}>${v}</${k}>`),
  ];
  const caps = new Set(keys.map((k) => CAP_SETTINGS[k]));
  const constraints = [
    ...keys.map(
      (k) => `<${CAP_SETTINGS[k]}><min>${CAP_MIN[k]}</min><max>${limits[k]}</max></${CAP_SETTINGS[k]}>`,
    ),
    // Every other setting is fixed unless the interface lists it: the engine refuses what the
    // interface's own list would (api/sql/settings.ts), and system.settings says so to drivers,
    // which then send only what they may (clickhouse-connect reads its `readonly` column).
    ...opts.settings
      .filter(
        (k) =>
          /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) &&
          !caps.has(k) &&
          !opts.changeable.has(k) &&
          !(k in FIXED_SETTINGS),
      )
      .map((k) => `<${k}><readonly/></${k}>`),
  ];
  const readable = [served, INCOMING_DATABASE, ...OTHER_DATABASES];
  const grants = [
    // The refresh: attach a new copy, swap it in, drop the old one; the start: drop system tables.
    `GRANT SHOW, SELECT, INSERT, CREATE TABLE, CREATE VIEW, DROP TABLE, DROP VIEW, ALTER, SYSTEM MERGES ON ${served}.*`,
    `GRANT SHOW, SELECT, INSERT, CREATE TABLE, DROP TABLE, ALTER, SYSTEM MERGES ON ${INCOMING_DATABASE}.*`,
    `GRANT CREATE DATABASE, DROP DATABASE ON *.*`,
    `GRANT SHOW, SELECT, DROP TABLE ON system.*`,
    ...readable
      .filter((db) => db !== served && db !== INCOMING_DATABASE)
      .map((db) => `GRANT SHOW, SELECT ON ${db}.*`),
  ];
  const users = join(dir, 'users.xml');
  writeFileSync(
    users,
    `<clickhouse>
  <profiles><default>${defaults.join('')}<constraints>${constraints.join('')}</constraints></default></profiles>
  <users><default><no_password/><profile>default</profile><quota>default</quota><grants>${grants
    .map((g) => `<query>${xml(g)}</query>`)
    .join('')}</grants></default></users>
  <quotas><default/></quotas>
</clickhouse>
`,
  );
  const config = join(dir, 'config.xml');
  writeFileSync(
    config,
    `<clickhouse>
  <users_config>${xml(users)}</users_config>
  <display_name>vaultstream</display_name>
  <max_server_memory_usage>${opts.maxServerMemoryBytes}</max_server_memory_usage>
  <database_atomic_delay_before_drop_table_sec>0</database_atomic_delay_before_drop_table_sec>
</clickhouse>
`,
  );
  return { config };
}

/**
 * The connection arguments of the admin connection: the engine's files; none of the analysts'
 * caps (the profile's apply to every connection, and connection arguments are not bound by its
 * constraints: the refresh lists and attaches more than an analyst may read); no dependency
 * checks (a copy of a view is replaced while the copies of views that read it stay).
 */
export function adminConnectionArgs(files: EngineFiles): string[] {
  return [
    `--config-file=${files.config}`,
    '--max_result_rows=0',
    '--max_result_bytes=0',
    '--max_execution_time=0',
    '--check_table_dependencies=0',
    '--check_referential_table_dependencies=0',
  ];
}

/** The connection arguments of an analysts' connection: read-only, the server's caps. */
export function analystConnectionArgs(limits: QueryLimits): string[] {
  const keys = Object.keys(CAP_SETTINGS) as (keyof QueryLimits)[];
  return [
    '--readonly=2',
    ...keys.map((k) => `--${CAP_SETTINGS[k]}=${limits[k]}`),
    // Big integers as strings, never lossy numbers (as the service's own connections).
    '--output_format_json_quote_64bit_integers=1',
    '--output_format_json_quote_decimals=1',
    '--max_block_size=8192',
    ...SERVICE_SETTINGS,
  ];
}

/**
 * The connection arguments of a lane's checking connection: read-only and the server's time and
 * memory caps (resolving a statement evaluates its scalar subqueries), but not its result caps:
 * the engine's trees of a statement are as long as the statement (bounded by the parser's limits).
 */
export function checkConnectionArgs(limits: QueryLimits): string[] {
  return [
    '--readonly=2',
    `--max_execution_time=${limits.maxExecutionTimeSeconds}`,
    `--max_memory_usage=${limits.maxMemoryUsageBytes}`,
    `--max_threads=${limits.maxThreads}`,
    '--max_result_rows=0',
    '--max_result_bytes=0',
    ...SERVICE_SETTINGS,
  ];
}

/**
 * Settings the service's own connections run with, for the same reason here: chDB 26.x's join
 * reordering fails on three joined views, intermittently (store/client.ts CHDB_SETTINGS).
 */
const SERVICE_SETTINGS = ['--query_plan_optimize_join_order_limit=0'];

/** The part of a chDB session the engine setup needs. */
export interface EngineSession {
  queryAsync(sql: string, opts?: { format?: string }): Promise<{ text(): string }>;
}

/**
 * Takes out of the engine what no analyst may read: the system tables but SYSTEM_TABLES, and
 * `default`'s file overlay (an empty database in its place); creates the served and incoming
 * databases. Run on the admin connection before any analysts' connection exists.
 */
export async function pruneEngine(admin: EngineSession, served: string): Promise<void> {
  const list = async (sql: string) =>
    (await admin.queryAsync(sql, { format: 'TSVRaw' }))
      .text()
      .split('\n')
      .filter((n) => n !== '');
  // The schema views read some system tables themselves (information_schema.tables reads
  // system.parts): those stay for them, and a query still may not name them (SYSTEM_TABLES).
  const forViews = new Set(
    (
      await list("SELECT create_table_query FROM system.tables WHERE database = 'information_schema'")
    ).flatMap((q) => [...q.matchAll(/\bsystem\.`?(\w+)/g)].map((m) => m[1])),
  );
  for (const name of await list("SELECT name FROM system.tables WHERE database = 'system'"))
    if (!SYSTEM_TABLES.has(name) && !forViews.has(name))
      await admin.queryAsync(`DROP TABLE system.\`${name.replace(/`/g, '')}\``);
  await admin.queryAsync('DROP DATABASE IF EXISTS default');
  for (const db of ['default', served, INCOMING_DATABASE])
    await admin.queryAsync(`CREATE DATABASE IF NOT EXISTS ${db} ENGINE = Atomic`);
}
