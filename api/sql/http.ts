/**
 * The ClickHouse-compatible HTTP interface, as the analysts' process serves it (api/sql/
 * analysts-main.ts). It speaks the parts of ClickHouse's HTTP protocol drivers use: `GET /ping`,
 * queries by `GET /?query=` or POST body, the `database`, `default_format`, `query_id` and
 * `param_*` parameters, credentials in `X-ClickHouse-User`/`X-ClickHouse-Key`, basic auth or
 * `user`/`password`, `X-ClickHouse-Summary`/`-Format`/`-Query-Id`/`-Exception-Code` headers,
 * ClickHouse's error body (`Code: N. DB::Exception: ... (NAME)`) and status codes, gzip/deflate/br
 * both ways, and ClickHouse's compressed blocks (`compress=1`, `decompress=1`).
 *
 * A request is read whole (bounded in size and by sql.http.clientTimeoutMs) before it takes a
 * query slot (sql.http.maxConcurrentQueries running, maxQueuedQueries waiting); a slot is a lane
 * (api/sql/lanes.ts), held until the lane's engine call is over. The lane checks the query
 * (store/read-only.ts) within sql.http.checkTimeoutMs and streams its answer (api/sql/answer.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../core/log.ts';
import type { SqlSettings } from '../../core/settings/sql.ts';
import { OTHER_DATABASES } from '../../store/read-only-rules.ts';
import { createAdmission } from './admission.ts';
import { type Encoding, sendAnswer } from './answer.ts';
import type { LaneRun, Lanes } from './lanes.ts';
import { ClickHouseHttpError, contentType, errorBody } from './protocol.ts';
import { credentials, readBody } from './request.ts';
import { clientSettings } from './settings.ts';

export interface AnalystsHttpOptions {
  settings: SqlSettings;
  /** The service's database (the default of requests that name none). */
  served: string;
  lanes: Lanes;
  /** Resolves once no generation of the copy is being swapped in (store/read-only-replica.ts). */
  settled: () => Promise<void>;
  log: Logger;
}

/** Held before a long answer starts to stream: a shorter one goes out whole, with its length. */
const BUFFER_BYTES = 1 << 20;

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The encoding the client accepts, of those `enable_http_compression=1` offers. */
function encodingOf(accept: string): Encoding | undefined {
  return (['gzip', 'deflate', 'br'] as const).find((e) =>
    new RegExp(`\\b${e}\\b(?!;q=0(\\.0*)?\\b)`).test(accept),
  );
}

/** The first message of a lane's query (its start or its refusal), or a refusal once the check took too long. */
async function firstMessage(run: LaneRun, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      run.cancel();
      reject(
        new ClickHouseHttpError(
          160,
          `checking the query took longer than ${ms} ms (sql.http.checkTimeoutMs): simplify it`,
          400,
          'TOO_SLOW',
        ),
      );
    }, ms);
  });
  try {
    return await Promise.race([run.next(), late]);
  } finally {
    clearTimeout(timer);
  }
}

export async function listenAnalysts(opts: AnalystsHttpOptions): Promise<{ server: Server; url: string }> {
  const { settings, served, lanes, log } = opts;
  const http = settings.http;
  const admission = createAdmission({
    running: http.maxConcurrentQueries,
    queued: http.maxQueuedQueries,
    waitMs: http.queueWaitMs,
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const deadline = Date.now() + http.clientTimeoutMs;
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
        `${(cred.user ?? http.users[0].name).slice(0, 100)}: Authentication failed: password is incorrect, or there is no user with such name`,
      );
    const header = (name: string) => {
      const v = req.headers[name];
      return typeof v === 'string' && v !== '' ? v : undefined;
    };
    const database = params.get('database') || header('x-clickhouse-database') || served;
    if (database !== served && database !== 'system' && !OTHER_DATABASES.has(database))
      throw new ClickHouseHttpError(
        81,
        `Database ${database.slice(0, 100)} does not exist here: this interface serves ${served}`,
      );
    const queryId = params.get('query_id') || crypto.randomUUID();
    if (!/^[\x21-\x7e]{1,200}$/.test(queryId))
      throw new ClickHouseHttpError(
        36,
        'query_id must be 1-200 printable ASCII characters (no spaces, CR or LF): it is sent back in a header',
      );
    const queryParams: Record<string, string> = {};
    for (const [name, value] of params)
      if (name.startsWith('param_')) queryParams[name.slice('param_'.length)] = value;
    const extra = clientSettings(params, settings.limits);
    const body =
      req.method === 'POST'
        ? await readBody(req, http.maxQueryBytes, deadline, params.get('decompress') === '1')
        : '';
    const query = [params.get('query') ?? '', body].filter((s) => s !== '').join('\n');
    if (query.length > http.maxQueryBytes) throw new ClickHouseHttpError(1000, 'Query is too large');
    if (query.trim() === '') throw new ClickHouseHttpError(62, 'Empty query');
    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort();
    };
    res.on('close', onClose);
    // The whole request is in: only now does it wait for, and take, a slot.
    const release = await admission.enter(abort.signal);
    let run: LaneRun | undefined;
    try {
      await opts.settled();
      abort.signal.throwIfAborted();
      run = lanes.run(
        {
          query,
          database,
          params: queryParams,
          defaultFormat: params.get('default_format') || header('x-clickhouse-format') || 'TabSeparated',
          settings: extra,
          nativeRevision: Number(params.get('client_protocol_version') ?? 0) || 0,
          compressBlocks: params.get('compress') === '1',
        },
        release,
      );
    } catch (err) {
      release();
      throw err;
    }
    const current = run;
    abort.signal.addEventListener('abort', () => current.cancel(), { once: true });
    const first = await firstMessage(run, http.checkTimeoutMs);
    if (first.type === 'error')
      throw new ClickHouseHttpError(first.error.code, first.error.message, undefined, first.error.name);
    if (first.type !== 'start') throw new ClickHouseHttpError(1001, `the lane answered ${first.type} first`);
    const accept = String(req.headers['accept-encoding'] ?? '');
    const level = Number(params.get('http_zlib_compression_level') ?? 3);
    await sendAnswer({
      res,
      run,
      headers: {
        'Content-Type': contentType(first.format),
        'X-ClickHouse-Format': first.format,
        'X-ClickHouse-Query-Id': queryId,
        'X-ClickHouse-Timezone': 'UTC',
        'X-ClickHouse-Server-Display-Name': 'vaultstream',
      },
      encoding: params.get('enable_http_compression') === '1' ? encodingOf(accept) : undefined,
      level: Number.isInteger(level) && level >= 1 && level <= 9 ? level : 3,
      maxBytes: first.caps.maxResultBytes,
      clientTimeoutMs: http.clientTimeoutMs,
      bufferBytes: BUFFER_BYTES,
    });
    res.off('close', onClose);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const e =
        err instanceof ClickHouseHttpError
          ? err
          : new ClickHouseHttpError(1001, 'the SQL interface failed on this request');
      if (!(err instanceof ClickHouseHttpError)) log.warn({ err }, 'sql http: request failed');
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
      if (!req.complete) req.socket.destroySoon();
    });
  });
  // Headers too must come in time (a connection sending one header byte a second holds no slot
  // either, but it holds a socket): Node's own timeouts, at the same bound.
  server.headersTimeout = http.clientTimeoutMs;
  server.requestTimeout = http.clientTimeoutMs + 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(http.port, http.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { server, url: `http://${host}:${addr.port}` };
}
