/**
 * A ClickHouse-compatible HTTP interface over the embedded store, for the data team and BI
 * tools (ClickHouse's own clients, Grafana's ClickHouse data source, DBeaver, curl). It speaks
 * the parts of ClickHouse's HTTP protocol those clients use: `GET /ping`, queries by
 * `GET /?query=` or POST body, the `database`, `default_format` and `query_id` parameters,
 * credentials in `X-ClickHouse-User`/`X-ClickHouse-Key`, basic auth or `user`/`password`,
 * `X-ClickHouse-Summary`/`-Format`/`-Query-Id`/`-Exception-Code` headers, ClickHouse's error
 * body (`Code: N. DB::Exception: ... (NAME)`) and status codes, and gzip/deflate/br both ways.
 *
 * Read-only is enforced here, not by the client: every query passes `store/read-only.ts`
 * and runs with `readonly=1` and the configured caps; a client may lower a cap with a URL
 * setting, never raise one, and any other setting that is not about output formatting is
 * refused. The engine runs one query at a time, so analyst queries run in the store's
 * background queue (every API query waiting goes first), at most `maxConcurrentQueries` are
 * admitted at once, and a query is cancelled when its client disconnects.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { VaultstreamError } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import type { SqlSettings } from '../../core/settings/sql.ts';
import type { Store } from '../../store/client.ts';
import {
  checkFormat,
  checkReadOnly,
  clickhouseCodeOf,
  limitedSql,
  storeLines,
} from '../../store/read-only.ts';
import { OTHER_DATABASES } from '../../store/read-only-rules.ts';
import { literal } from '../../store/tsv.ts';
import { createAdmission } from './admission.ts';
import { compressBlocks } from './compressed-blocks.ts';
import { nativeForRevision } from './native-revision.ts';
import { ClickHouseHttpError, contentType, errorBody, resultRows } from './protocol.ts';
import { credentials, readBody } from './request.ts';
import { clientSettings } from './settings.ts';

export interface SqlHttpOptions {
  store: Store;
  settings: SqlSettings;
  log: Logger;
}

export interface SqlHttp {
  server: Server;
  url: string;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Refuses a config that would expose a user with no password beyond loopback. */
export function checkExposure(settings: SqlSettings['http']): void {
  if (LOOPBACK.test(settings.host)) return;
  const open = settings.users.filter((u) => u.password === '').map((u) => u.name);
  if (open.length)
    throw new VaultstreamError(
      'CONFIG_INVALID',
      `sql.http.host is ${settings.host} (not loopback) but user(s) ${open.join(', ')} have no password: set sql.http.users[].password, or listen on 127.0.0.1`,
    );
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The engine's message without chDB's prefix and ClickHouse's own code/name/version decorations. */
function engineMessage(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  return raw
    .replace(/^Query failed: /, '')
    .replace(/^(Code: \d+\. DB::Exception: )+/, '')
    .replace(/\s*\([A-Z_]+\)( \(version [^)]*\))?\.?\s*$/s, '')
    .split('\n')[0]
    .replace(/\.$/, '');
}

/** The engine's own name for its error code (`... (UNKNOWN_TABLE) (version ...)`), when it gives one. */
function engineName(err: unknown): string | undefined {
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, d = 0; e && d < 6; d++) {
    const m = /\(([A-Z][A-Z0-9_]+)\)( \(version [^)]*\))?\.?\s*$/.exec(String(e.message ?? ''));
    if (m) return m[1];
    e = e.cause as typeof e;
  }
  return undefined;
}

function toHttpError(err: unknown): ClickHouseHttpError {
  if (err instanceof ClickHouseHttpError) return err;
  if (err instanceof VaultstreamError && err.code === 'STORE_UNAVAILABLE')
    return new ClickHouseHttpError(1001, err.message, 503);
  if (err instanceof VaultstreamError) {
    const c =
      typeof err.details?.clickhouseCode === 'number'
        ? err.details.clickhouseCode
        : clickhouseCodeOf(err.cause);
    const code = c ?? (err.code === 'READ_ONLY' ? 164 : 62);
    return new ClickHouseHttpError(
      code,
      err.code === 'READ_ONLY' ? err.message : engineMessage(err.cause ?? err),
      undefined,
      engineName(err),
    );
  }
  if ((err as Error)?.name === 'AbortError') return new ClickHouseHttpError(394, 'Query was cancelled');
  return new ClickHouseHttpError(
    clickhouseCodeOf(err) ?? 1001,
    engineMessage(err),
    undefined,
    engineName(err),
  );
}

/**
 * The message as the client wrote its query: without the wrapper the checks ran it in
 * (`formatQuerySingleLine('...')`, `EXPLAIN AST ...`) and the SETTINGS clause the server appended.
 */
function asClientWrote(e: ClickHouseHttpError, query: string, ran: string[]): ClickHouseHttpError {
  let message = e.message;
  for (const text of ran) if (text) message = message.replaceAll(text, '');
  message = message
    .replaceAll(`SELECT formatQuerySingleLine(${literal(query)})`, query)
    .replace(/SELECT formatQuerySingleLine\('/g, '')
    .replace(/EXPLAIN AST /g, '');
  return new ClickHouseHttpError(e.code, message, e.status, e.name);
}

/** Starts the interface; resolves once it listens. */
export async function startSqlHttp(opts: SqlHttpOptions): Promise<SqlHttp> {
  const { store, settings, log } = opts;
  const http = settings.http;
  checkExposure(http);
  const admission = createAdmission({
    running: http.maxConcurrentQueries,
    queued: http.maxQueuedQueries,
    waitMs: http.queueWaitMs,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const params = url.searchParams;
    if (
      req.method === 'GET' &&
      (url.pathname === '/ping' || (url.pathname === '/' && !params.has('query')))
    ) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' }).end('Ok.\n');
      return;
    }
    if (url.pathname !== '/' && url.pathname !== '/query')
      throw new ClickHouseHttpError(
        1000,
        `There is no handle ${url.pathname.slice(0, 200)}: use / (queries) or /ping`,
        404,
      );
    if (req.method !== 'GET' && req.method !== 'POST')
      throw new ClickHouseHttpError(1000, `Method ${req.method} is not allowed: use GET or POST`, 405);
    const cred = credentials(req, params);
    const user = cred.user ? http.users.find((u) => u.name === cred.user) : http.users[0];
    if (!user || !sameSecret(user.password, cred.password))
      throw new ClickHouseHttpError(
        516,
        `${cred.user ?? http.users[0].name}: Authentication failed: password is incorrect, or there is no user with such name`,
      );
    const header = (name: string) => {
      const v = req.headers[name];
      return typeof v === 'string' && v !== '' ? v : undefined;
    };
    const database = params.get('database') || header('x-clickhouse-database') || store.database;
    const queryId = params.get('query_id') || crypto.randomUUID();
    if (!/^[\x21-\x7e]{1,200}$/.test(queryId))
      throw new ClickHouseHttpError(
        36,
        'query_id must be 1-200 printable ASCII characters (no spaces, CR or LF): it is sent back in a header',
      );
    const queryParams: Record<string, string> = {};
    for (const [name, value] of params)
      if (name.startsWith('param_')) queryParams[name.slice('param_'.length)] = value;
    if (database !== store.database && database !== 'system' && !OTHER_DATABASES.has(database.toLowerCase()))
      throw new ClickHouseHttpError(
        81,
        `Database ${database.slice(0, 100)} does not exist here: this interface serves ${store.database}`,
      );
    const { limits, extra } = clientSettings(params, settings.limits);
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.on('close', onClose);
    // Admitted before the body is read: a request waiting for its turn holds no body in memory.
    let release: (() => void) | undefined;
    let query = '';
    /** Texts this server added to what ran, left out of error messages. */
    const ran: string[] = [];
    try {
      release = await admission.enter(abort.signal);
      const body =
        req.method === 'POST'
          ? await readBody(req, http.maxQueryBytes, params.get('decompress') === '1')
          : '';
      query = [params.get('query') ?? '', body].filter((s) => s !== '').join('\n');
      if (query.length > http.maxQueryBytes) throw new ClickHouseHttpError(1000, 'Query is too large');
      if (query.trim() === '') throw new ClickHouseHttpError(62, 'Empty query');
      const checked = await checkReadOnly(storeLines(store, true, queryParams), query, {
        current: database,
        served: store.database,
      });
      abort.signal.throwIfAborted();
      const format = checkFormat(
        checked.format ?? (params.get('default_format') || header('x-clickhouse-format') || 'TabSeparated'),
      );
      let sql = limitedSql(checked, limits);
      if (extra.length) sql += `, ${extra.join(', ')}`;
      ran.push(sql.slice(sql.indexOf(' SETTINGS readonly = 1')));
      const result = await store.queryRaw(sql, {
        format,
        signal: abort.signal,
        background: true,
        database,
        params: queryParams,
      });
      const headers: Record<string, string> = {
        'Content-Type': contentType(format),
        'X-ClickHouse-Format': format,
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Timezone': 'UTC',
        'X-ClickHouse-Server-Display-Name': 'vaultstream',
        'X-ClickHouse-Summary': JSON.stringify({
          read_rows: String(result.rowsRead),
          read_bytes: String(result.bytesRead),
          written_rows: '0',
          written_bytes: '0',
          total_rows_to_read: String(result.rowsRead),
          result_rows: String(resultRows(result.bytes, format)),
          result_bytes: String(result.bytes.length),
          elapsed_ns: String(Math.round(result.elapsedMs * 1e6)),
        }),
      };
      // compress=1: the answer in ClickHouse's compressed blocks (the JDBC v2 driver asks for it).
      let out = result.bytes;
      // Native as the client's protocol revision reads it (clickhouse-go sends 54460).
      if (format.toLowerCase() === 'native')
        out = nativeForRevision(out, Number(params.get('client_protocol_version') ?? 0));
      if (params.get('compress') === '1') out = await compressBlocks(out);
      const accept = String(req.headers['accept-encoding'] ?? '');
      if (params.get('enable_http_compression') === '1') {
        const enc = ['gzip', 'deflate', 'br'].find((e) =>
          new RegExp(`\\b${e}\\b(?!;q=0(\\.0*)?\\b)`).test(accept),
        );
        if (enc) {
          out =
            enc === 'gzip'
              ? zlib.gzipSync(out)
              : enc === 'deflate'
                ? zlib.deflateSync(out)
                : zlib.brotliCompressSync(out);
          headers['Content-Encoding'] = enc;
        }
      }
      headers['Content-Length'] = String(out.length);
      res.writeHead(200, headers).end(out);
    } catch (err) {
      throw asClientWrote(toHttpError(err), query, ran);
    } finally {
      release?.();
      res.off('close', onClose);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const e = toHttpError(err);
      if (e.code !== 394 && e.status >= 500) log.warn({ err, code: e.code }, 'sql http: query failed');
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      res
        .writeHead(e.status, {
          'Content-Type': 'text/plain; charset=UTF-8',
          'X-ClickHouse-Exception-Code': String(e.code),
          'X-ClickHouse-Server-Display-Name': 'vaultstream',
          // A body left unread (refused before or while it was read) is not drained: the connection ends.
          ...(req.complete ? {} : { Connection: 'close' }),
        })
        .end(errorBody(e.code, e.message, e.name));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(http.port, http.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
