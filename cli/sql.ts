/**
 * `vaultstream sql`: one statement against the store, read-only unless `--write`. A read-only
 * statement always goes through the SQL interface (api/sql/), with its checks and caps: the
 * running service's when one holds the data directory, else one this command starts over its own
 * store for the statement (so the CLI is no way around the interface). A statement that names
 * its own FORMAT prints the engine's bytes as they are, any other is printed as a table, JSON or
 * CSV.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { portFree, type SqlHttp, startSqlHttp } from '../api/sql/server.ts';
import type { Config } from '../core/config.ts';
import { errorMessage, VaultstreamError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import { createLogger } from '../core/log.ts';
import type { SqlSettings } from '../core/settings/sql.ts';
import type { Store } from '../store/client.ts';
import { sqlError } from '../store/read-only.ts';
import { type Format, formatRows, isRowFormat } from './output.ts';

export interface SqlOptions {
  format: Format;
  write?: boolean;
}

/** A SQL interface this command runs its statements through, and how to reach it. */
export interface SqlSession {
  run(query: string, opts: SqlOptions): Promise<string | Buffer>;
  close(): Promise<void>;
}

/**
 * The SQL interface over `store` for this command alone: on loopback, an ephemeral port and a
 * user whose password only this process knows.
 */
export async function openSql(store: Store, settings: SqlSettings, log?: Logger): Promise<SqlSession> {
  const [{ n }] = await store.query<{ n: string }>(
    'SELECT toString(count()) AS n FROM system.databases WHERE name = {db:String}',
    { db: store.database },
  );
  const empty = n !== '1';
  const user = { name: 'vaultstream-cli', password: randomBytes(16).toString('hex') };
  const http = await startSqlHttp({
    store,
    log: log ?? createLogger('warn'),
    settings: {
      ...settings,
      http: { ...settings.http, host: '127.0.0.1', port: 0, users: [user], maxConcurrentQueries: 1 },
    },
  });
  return {
    run: async (query, opts) => {
      if (opts.write)
        throw new VaultstreamError('READ_ONLY', 'the SQL interface is read-only: --write runs on the store');
      try {
        return await queryInterface(http.url, user, query, opts);
      } catch (err) {
        // An empty data directory has no database yet: say where the store was looked for.
        const code = err instanceof VaultstreamError ? err.details?.clickhouseCode : undefined;
        if (empty && (code === 60 || code === 81))
          throw new VaultstreamError(
            'STORE_UNAVAILABLE',
            `UNKNOWN_DATABASE: Database ${store.database} does not exist; the store in this data directory is empty: run vaultstream start with it first, or point VAULTSTREAM_DATA_DIR (dataDir) at the one the service uses`,
            { cause: err },
          );
        throw err;
      }
    },
    close: () => http.close(),
  };
}

/** Runs `query` and returns what the CLI prints. */
export async function runSql(
  store: Store,
  query: string,
  opts: SqlOptions & { settings: SqlSettings },
): Promise<string | Buffer> {
  if (opts.write) {
    try {
      await store.command(query);
    } catch (err) {
      throw sqlError(err);
    }
    return 'ok\n';
  }
  const session = await openSql(store, opts.settings);
  try {
    return await session.run(query, opts);
  } finally {
    await session.close();
  }
}

/** Where a running process records its SQL interface's address, for `vaultstream sql` from another shell. */
export function sqlAddressFile(dataDir: string): string {
  return join(resolve(dataDir), 'sql-http.json');
}

/** The SQL interface's port in use, as the service's start-up error. */
function portInUse(cfg: Config, err: unknown): unknown {
  if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') return err;
  return new VaultstreamError(
    'PORT_IN_USE',
    `the SQL interface cannot listen on ${cfg.sql.http.host}:${cfg.sql.http.port}: the port is in use; set sql.http.port (VAULTSTREAM__sql__http__port) or sql.http.enabled=false`,
    { cause: err },
  );
}

/**
 * Fails at once when the SQL interface's port is taken: run before the roles start, so that is
 * the start-up's error (the interface itself starts last, api/sql/server.ts).
 */
export async function checkSqlPort(cfg: Config, store: Store): Promise<void> {
  if (store.kind !== 'chdb' || !cfg.sql.http.enabled || cfg.sql.http.port === 0) return;
  await portFree(cfg.sql.http.host, cfg.sql.http.port).catch((err: unknown) => {
    throw portInUse(cfg, err);
  });
}

/**
 * Serves the ClickHouse-compatible SQL interface when the store is embedded (a ClickHouse
 * server has its own), records its address under the data directory, and returns its stop.
 */
export async function serveSql(
  cfg: Config,
  store: Store,
  log: Logger,
): Promise<(() => Promise<void>) | undefined> {
  if (store.kind !== 'chdb' || !cfg.sql.http.enabled) return undefined;
  let sql: SqlHttp;
  try {
    sql = await startSqlHttp({ store, settings: cfg.sql, log });
  } catch (err) {
    throw portInUse(cfg, err);
  }
  const file = sqlAddressFile(cfg.dataDir);
  writeFileSync(file, `${JSON.stringify({ url: sql.url, pid: process.pid })}\n`);
  log.info({ url: sql.url }, 'SQL interface listening (ClickHouse HTTP, read-only)');
  process.stdout.write(`vaultstream SQL ${sql.url} (ClickHouse HTTP interface, read-only)\n`);
  return async () => {
    rmSync(file, { force: true });
    await sql.close();
  };
}

/**
 * `vaultstream sql` while another process owns the data directory: the query goes through that
 * process's SQL interface, printed in the same formats.
 */
export async function runSqlRemote(
  cfg: Config,
  owner: number,
  query: string,
  opts: SqlOptions,
): Promise<string | Buffer> {
  let url: string | undefined;
  try {
    const rec = JSON.parse(readFileSync(sqlAddressFile(cfg.dataDir), 'utf8')) as {
      url?: string;
      pid?: number;
    };
    if (rec.pid === owner) url = rec.url;
  } catch {}
  if (!url)
    throw new VaultstreamError(
      'STORE_UNAVAILABLE',
      `data directory ${resolve(cfg.dataDir)} is in use by process ${owner}, which serves no SQL interface (sql.http.enabled is off, or it is not a store role); stop it, or enable sql.http`,
    );
  if (opts.write)
    throw new VaultstreamError(
      'READ_ONLY',
      `--write needs the data directory, which process ${owner} holds; its SQL interface is read-only: stop it first to write`,
    );
  return queryInterface(url, cfg.sql.http.users[0], query, opts);
}

/** Sends `query` to the SQL interface at `url` as `user`; prints the answer as the CLI does. */
async function queryInterface(
  url: string,
  user: { name: string; password: string },
  query: string,
  opts: SqlOptions,
): Promise<string | Buffer> {
  const engineFormat = isRowFormat(opts.format) ? 'JSONEachRow' : opts.format;
  const res = await fetch(`${url}/?default_format=${encodeURIComponent(engineFormat)}`, {
    method: 'POST',
    body: query,
    headers: { 'X-ClickHouse-User': user.name, 'X-ClickHouse-Key': user.password },
  }).catch((err: unknown) => {
    throw new VaultstreamError(
      'STORE_UNAVAILABLE',
      `cannot reach the SQL interface at ${url}: ${errorMessage(err)}`,
      {
        cause: err,
      },
    );
  });
  const body = Buffer.from(await res.arrayBuffer());
  if (!res.ok) {
    const code = Number(res.headers.get('x-clickhouse-exception-code'));
    const text = body.toString('utf8').trim();
    const message = text.replace(/^Code: \d+\. DB::Exception: /, '').replace(/ \(version [^)]*\)$/, '');
    if (code === 164)
      throw new VaultstreamError(
        'READ_ONLY',
        `${message.replace(/\. \(READONLY\)$/, '')}. \`vaultstream sql\` is read-only unless --write is given`,
        { details: { clickhouseCode: code } },
      );
    throw new VaultstreamError(code === 159 ? 'TIMEOUT' : code === 62 ? 'SQL_SYNTAX' : 'BAD_INPUT', message, {
      details: { clickhouseCode: code },
    });
  }
  if (!isRowFormat(opts.format) || res.headers.get('x-clickhouse-format') !== 'JSONEachRow') return body;
  const rows = body
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return formatRows(rows, opts.format);
}
