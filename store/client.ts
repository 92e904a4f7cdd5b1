/**
 * The store: embedded chDB (default) or a ClickHouse server (`store.url`), both
 * behind `@clickhouse/client`. A chDB connection runs one query at a time, so calls to it are
 * queued here rather than left to contend inside the engine; analysts' SQL has a connection of
 * its own (docs/architecture.md#embedded-store-connections).
 */
import { mkdirSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import type { Config } from '../core/config.ts';
import { processFilesDir } from '../core/lock.ts';
import { createLane, type Lane, runCancellable, unescapeParam } from './chdb-lane.ts';
import { inlineParams } from './inline-params.ts';
import { literal, toTsvBuffer } from './tsv.ts';

export interface RawQueryOptions {
  /** Output format when the statement names none (TabSeparated by default). */
  format?: string;
  signal?: AbortSignal;
  /**
   * Analysts' SQL. Embedded store: runs on the analysts' own connection (store/chdb-lane.ts),
   * never in the service's lock: the API goes first.
   */
  background?: boolean;
  /**
   * Database for unqualified names (embedded store: the connection's current database, switched
   * before the statement inside the same turn of its lock; the service's own SQL always
   * qualifies its names).
   */
  database?: string;
  /**
   * Values of the statement's `{name:Type}` parameters, as ClickHouse's HTTP interface takes them
   * (`param_name`, in the escaped text form); bound by the engine, never spliced into the text.
   * Embedded store: analysts' queries only; a ClickHouse server binds them for any query.
   */
  params?: Record<string, string>;
}

export interface Store {
  readonly kind: 'chdb' | 'server';
  readonly database: string;
  readonly client: ClickHouseClient;
  /** Runs a read query and returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  /**
   * The same read's rows as the engine wrote them, JSONEachRow (one object a line), for
   * `parseRows`: what `query` parses, and what the API's thread is sent instead of the rows
   * (api/thread/store-proxy.ts: a string crosses a thread for a copy, rows for a structured clone).
   */
  queryText(sql: string, params?: Record<string, unknown>): Promise<string>;
  /** Runs a statement with no result (DDL, INSERT ... SELECT, SYSTEM). */
  command(sql: string, settings?: Record<string, unknown>): Promise<void>;
  /** Inserts rows (objects with the same keys) into `table` (database-qualified by the store). */
  insert(table: string, rows: Record<string, unknown>[], settings?: Record<string, unknown>): Promise<void>;
  /** Inserts rows already encoded as TabSeparated text (see store/tsv.ts) into `columns` of `table`. */
  insertTsv(
    table: string,
    columns: readonly string[],
    tsv: Buffer,
    settings?: Record<string, string | number | boolean>,
  ): Promise<void>;
  /**
   * Runs one statement and returns the engine's bytes as they are (the read-only SQL
   * interfaces: any output format, no JSON round trip), in the statement's own FORMAT or else
   * `format` (TabSeparated when neither is given). `signal` cancels it.
   */
  queryRaw(sql: string, opts?: RawQueryOptions): Promise<RawResult>;
  close(): Promise<void>;
}

/** What a raw query returned: the engine's bytes and its counters. */
export interface RawResult {
  bytes: Buffer;
  rowsRead: number;
  bytesRead: number;
  elapsedMs: number;
}

const BASE_SETTINGS = {
  // Big integers (UInt256 amounts) come back as strings, never as lossy JS numbers.
  output_format_json_quote_64bit_integers: 1,
  output_format_json_quote_decimals: 1,
  date_time_input_format: 'best_effort',
  // The highest query priority: while one of these runs, the engine pauses lower ones between
  // blocks (analysts' queries run at 10, see below): the API and the pipeline go first.
  priority: '1',
} as const;

/**
 * Engine settings for chDB's connections (the service's and the analysts'): chDB 26.x's join
 * reordering fails on three joined views (docs/queries/03: "Left and right columns have same
 * names", or "Block structure mismatch"), intermittently; without it the documented joins run.
 */
const CHDB_SETTINGS = { query_plan_optimize_join_order_limit: 0 } as const;

/**
 * The rows of a JSONEachRow text (`Store.queryText`), as `JSON.parse` reads each line: the
 * engine escapes control characters inside strings, so a line break only ends a row.
 */
export function parseRows<T>(text: string): T[] {
  const rows = text.trimEnd();
  return rows ? (JSON.parse(`[${rows.replaceAll('\n', ',')}]`) as T[]) : [];
}

/** Sets `settings` on a chDB session, for every later query on it. */
async function setAll(
  session: { queryAsync(sql: string): Promise<unknown> },
  settings: Record<string, string | number>,
): Promise<void> {
  for (const [name, value] of Object.entries(settings))
    await session.queryAsync(`SET ${name} = ${literal(value)}`);
}

/**
 * Options of chDB's allocator, unless the environment sets them: its own jemalloc, which reads
 * `JE_MALLOC_CONF` (not `MALLOC_CONF`; `SELECT * FROM system.jemalloc_stats` shows what is in
 * force). As built, freed pages stay resident for 5 s and chDB runs no memory worker to purge
 * them; here a background thread purges pages unused for 1 s, which lowers the backfill's peak
 * RSS for the same CPU. Purging at once (`dirty_decay_ms:0`, on the freeing thread) would take
 * more off but costs CPU on the engine's threads: every reused page faults in again.
 */
const ENGINE_MALLOC_CONF = 'background_thread:true,dirty_decay_ms:1000';

/**
 * chDB's own errors carry the ClickHouse exception code as `clickhouseCode`; the client's
 * errors (and the callers that tell bad data from a failing store) read it as `code`.
 */
function clickhouseError(err: unknown): unknown {
  const code = (err as { clickhouseCode?: unknown })?.clickhouseCode;
  if (!(err instanceof Error) || typeof code !== 'number') return err;
  return Object.assign(new Error(err.message, { cause: err }), { code: String(code) });
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`not a plain identifier: ${JSON.stringify(name)}`);
  return name;
}

/** `INSERT INTO table (columns) FROM INFILE 'file' SETTINGS ... FORMAT TabSeparated`. */
export function infileInsert(
  table: string,
  columns: readonly string[],
  file: string,
  settings: Record<string, string | number | boolean>,
): string {
  const set = Object.entries(settings).map(([k, v]) => `${identifier(k)} = ${literal(v)}`);
  return (
    `INSERT INTO ${identifier(table)} (${columns.map(identifier).join(', ')}) FROM INFILE ${literal(file)}` +
    `${set.length ? ` SETTINGS ${set.join(', ')}` : ''} FORMAT TabSeparated`
  );
}

/**
 * The directory chDB inserts are spooled through (`<dataDir>/insert-spool`), cleared of files
 * left by processes that died mid-insert (named `<pid>-<n>.tsv`; the data they held was never
 * committed to the bus, so it is delivered again).
 */
/** Spool file numbers: unique in the process, whatever number of stores it opens. */
let spoolSeq = 0;

function spoolDir(dataDir: string): string {
  return processFilesDir(dataDir, 'insert-spool');
}

export async function createStore(cfg: Config): Promise<Store> {
  const database = cfg.store.database;
  let client: ClickHouseClient;
  let kind: Store['kind'];
  /** chDB: the service's connection, the analysts', and the one that cancels queries. */
  let lanes: { main: Lane; analysts: Lane; control: Lane } | undefined;
  let closeConnections: (() => Promise<void>) | undefined;
  /** chDB's raw insert, taking a database-qualified table. */
  let rawInsert: Store['insertTsv'] | undefined;
  /** chDB: a read's JSONEachRow text from the connection itself (see below). */
  let chdbText: ((sql: string, params?: Record<string, unknown>) => Promise<string>) | undefined;
  if (cfg.store.url) {
    kind = 'server';
    client = createClient({
      url: cfg.store.url,
      username: cfg.store.username,
      password: cfg.store.password,
      clickhouse_settings: { ...BASE_SETTINGS },
      request_timeout: 300_000,
      // Failures reach the caller as errors (with their own code and hint); the client's own
      // console report of them would print a second, longer copy on stderr.
      log: { level: ClickHouseLogLevel.OFF },
    });
  } else {
    kind = 'chdb';
    const path = resolve(join(cfg.dataDir, 'chdb'));
    mkdirSync(path, { recursive: true });
    // The engine's allocator options are read once, when the library loads: set them first.
    process.env.JE_MALLOC_CONF ??= ENGINE_MALLOC_CONF;
    // Loaded lazily: the 500 MB engine is not needed when a server is configured.
    const { createChdbConnection } = await import('chdb/connection');
    const connection = createChdbConnection({ path });
    // The settings are set once on the session (they last for it): given to the client, its chDB
    // connection would prefix every query with one SET each.
    await setAll(connection.chdb, { ...BASE_SETTINGS, ...CHDB_SETTINGS });
    client = createClient({ connection: connection as never, log: { level: ClickHouseLogLevel.OFF } });
    // Reads ask the connection, as the client would (`<sql> FORMAT JSONEachRow`, the same errors)
    // without its result set and tracing spans, a fixed cost on each of the API's short reads.
    // Their parameters are written in as typed literals
    // (store/inline-params.ts): chdb-node binds parameters one query at a time process-wide, so a
    // bound read would wait for an analyst's bound query.
    chdbText = async (sql, params) => {
      const res = await connection.query({
        query: `${inlineParams(sql, params).trim().replace(/;+$/, '')} \nFORMAT JSONEachRow`,
      });
      const chunks: Buffer[] = [];
      for await (const chunk of res.stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    };
    // Inserts bypass the client. Its chDB connection copies the body into one SQL string
    // (`INSERT ... FORMAT X\n<body>`) that the engine parses as a query, and chDB's own raw
    // insert, though it hands the buffer over without a copy, still reads it as a query's inline
    // data. Spooled to a file and read with `FROM INFILE`, the same bytes load about three times as
    // fast (bench/engine.ts measures both). A file lives for one insert.
    const spool = spoolDir(cfg.dataDir);
    rawInsert = async (table, columns, tsv, settings) => {
      const file = join(spool, `${process.pid}-${spoolSeq++}.tsv`);
      await writeFile(file, tsv);
      try {
        await connection.chdb.queryAsync(
          infileInsert(table, columns, file, {
            date_time_input_format: BASE_SETTINGS.date_time_input_format,
            ...settings,
          }),
        );
      } catch (err) {
        throw clickhouseError(err);
      } finally {
        await unlink(file).catch(() => undefined);
      }
    };
    // Analysts' queries run on a connection of their own, and cancellations on a third (idle) one.
    // A Session of its own (not a client connection): it binds query parameters (`{name:Type}`).
    const { Session } = await import('chdb');
    const analysts = new Session(path);
    const control = createChdbConnection({ path });
    // The service connection's settings (big integers as strings), then the analysts' own below.
    await setAll(analysts, { ...BASE_SETTINGS, ...CHDB_SETTINGS });
    // The parser's limit (256 KiB by default) above the interface's largest query (sql.http.maxQueryBytes,
    // at most 16 MiB) as the checks quote it (up to twice as long, escaped), so that is the real limit.
    await analysts.queryAsync('SET max_query_size = 40000000');
    // Below the service's queries (priority 1): paused between blocks while one of those runs.
    await analysts.queryAsync('SET priority = 10');
    lanes = {
      main: createLane(connection.chdb),
      analysts: createLane(analysts),
      control: createLane(control.chdb),
    };
    closeConnections = async () => {
      // In each lane's turn: a connection is never closed under a running query.
      const { analysts: a, control: c } = lanes as NonNullable<typeof lanes>;
      await a.run(async () => analysts.close()).catch(() => analysts.close());
      await c.run(() => control.close()).catch(() => control.close());
    };
  }
  const run = <T>(fn: () => Promise<T>, background = false): Promise<T> =>
    lanes ? lanes.main.run(fn, background) : fn();
  /** chDB: one statement's bytes in `format`, on the analysts' connection when `background`. */
  const chdbRaw = (l: NonNullable<typeof lanes>, sql: string, opts: RawQueryOptions): Promise<RawResult> => {
    const lane = opts.background ? l.analysts : l.main;
    return lane.run(async () => {
      const t0 = performance.now();
      try {
        if (opts.database) await lane.chdb.queryAsync(`USE ${identifier(opts.database)}`);
        const res = await runCancellable(lane.chdb, l.control, sql, {
          format: opts.format ?? 'TabSeparated',
          signal: opts.signal,
          params: opts.params,
        });
        return { ...res, elapsedMs: performance.now() - t0 };
      } catch (err) {
        throw clickhouseError(err);
      }
    });
  };
  const queryText: Store['queryText'] = (sql, params) =>
    run(async () => {
      if (chdbText) return chdbText(sql, params);
      const rs = await client.query({ query: sql, format: 'JSONEachRow', query_params: params });
      return rs.text();
    });
  const insertTsv: Store['insertTsv'] = (table, columns, tsv, settings) =>
    run(async () => {
      if (tsv.length === 0) return;
      const qualified = `${database}.${table}`;
      if (rawInsert) return rawInsert(qualified, columns, tsv, settings);
      await client.insert({
        table: qualified,
        values: Readable.from([tsv], { objectMode: false }),
        columns: columns as [string, ...string[]],
        format: 'TabSeparated',
        clickhouse_settings: settings as never,
      });
    });
  return {
    kind,
    database,
    client,
    query: async <T>(sql: string, params?: Record<string, unknown>) =>
      parseRows<T>(await queryText(sql, params)),
    queryText,
    command: (sql, settings) =>
      run(async () => {
        await client.command({ query: sql, clickhouse_settings: settings as never });
      }),
    insert: async (table, rows, settings) => {
      if (rows.length === 0) return;
      // TabSeparated parses faster than the JSON formats (see store/tsv.ts).
      const columns = Object.keys(rows[0]);
      await insertTsv(table, columns, toTsvBuffer(rows, columns), settings as never);
    },
    insertTsv,
    queryRaw: (sql, opts = {}) =>
      lanes
        ? chdbRaw(lanes, sql, opts)
        : run(async () => {
            opts.signal?.throwIfAborted();
            const t0 = performance.now();
            const res = await client.exec({
              query: sql,
              abort_signal: opts.signal,
              clickhouse_settings: { default_format: opts.format ?? 'TabSeparated' } as never,
              query_params: opts.params
                ? Object.fromEntries(Object.entries(opts.params).map(([k, v]) => [k, unescapeParam(v)]))
                : undefined,
            });
            const chunks: Buffer[] = [];
            for await (const chunk of res.stream) chunks.push(Buffer.from(chunk as Buffer));
            const summary = res.summary;
            return {
              bytes: Buffer.concat(chunks),
              rowsRead: Number(summary?.read_rows ?? 0),
              bytesRead: Number(summary?.read_bytes ?? 0),
              elapsedMs: performance.now() - t0,
            };
          }),
    close: async () => {
      await closeConnections?.();
      await run(() => client.close());
    },
  };
}
