/**
 * Reading a SQL request before any work: its credentials, and its body, size-checked as it
 * streams in and bounded in time. A compressed body is inflated as a stream and stopped as soon
 * as the inflated bytes pass the limit (a 1 MiB gzip of 1 GiB of zeros costs at most the limit,
 * not a gigabyte held in memory first); the compressed bytes count against the same limit. A
 * body not all in by its deadline is refused (408, Code 209): a client that sends a byte every
 * few seconds holds a connection for that long, and no query slot (those are taken after).
 */
import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import * as zlib from 'node:zlib';
import { decompressBlocks } from './compressed-blocks.ts';
import { ClickHouseHttpError } from './protocol.ts';

export function credentials(
  req: IncomingMessage,
  params: URLSearchParams,
): { user?: string; password: string } {
  const hUser = req.headers['x-clickhouse-user'];
  if (typeof hUser === 'string')
    return { user: hUser, password: String(req.headers['x-clickhouse-key'] ?? '') };
  const auth = req.headers.authorization;
  if (auth?.startsWith('Basic ')) {
    const text = Buffer.from(auth.slice(6), 'base64').toString('utf8');
    const i = text.indexOf(':');
    return i < 0 ? { user: text, password: '' } : { user: text.slice(0, i), password: text.slice(i + 1) };
  }
  return { user: params.get('user') ?? undefined, password: params.get('password') ?? '' };
}

const INFLATERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

const tooLarge = (max: number) =>
  new ClickHouseHttpError(1000, `Request body is too large (more than ${max} bytes)`);

/**
 * The body as text, at most `max` bytes both as sent and inflated, all in by `deadline` (a time of
 * Date.now()); refused as soon as it is more or late. With `blocks` (the `decompress=1` parameter)
 * the body is ClickHouse compressed blocks.
 */
export async function readBody(
  req: IncomingMessage,
  max: number,
  deadline: number,
  blocks = false,
): Promise<string> {
  const enc = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) throw tooLarge(max);
  const make = enc === 'identity' || enc === '' ? undefined : INFLATERS[enc];
  if (!make && enc !== 'identity' && enc !== '')
    throw new ClickHouseHttpError(638, `Unknown compression method: ${enc.slice(0, 40)}`);
  const inflater = make?.();
  const chunks: Buffer[] = [];
  let sent = 0;
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const fail = (err: unknown) => {
      clearTimeout(timer);
      // Stop reading: the answer goes out with `Connection: close` (server.ts).
      req.unpipe();
      req.pause();
      inflater?.destroy();
      reject(err);
    };
    const take = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return fail(tooLarge(max));
      chunks.push(chunk);
    };
    timer = setTimeout(
      () =>
        fail(
          new ClickHouseHttpError(
            209,
            'Timeout exceeded while reading the request body (sql.http.clientTimeoutMs)',
            408,
            'SOCKET_TIMEOUT',
          ),
        ),
      Math.max(0, deadline - Date.now()),
    );
    req.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > max) fail(tooLarge(max));
    });
    req.on('error', fail);
    if (inflater) {
      inflater.on('data', take);
      inflater.on('error', (err) =>
        fail(
          err instanceof ClickHouseHttpError
            ? err
            : new ClickHouseHttpError(432, `Cannot decompress the request body as ${enc}: ${err.message}`),
        ),
      );
      inflater.on('end', () => resolve());
      req.pipe(inflater);
    } else {
      req.on('data', take);
      req.on('end', () => resolve());
    }
  });
  await done.finally(() => clearTimeout(timer));
  const body = Buffer.concat(chunks);
  return (blocks ? decompressBlocks(body, max) : body).toString('utf8');
}
