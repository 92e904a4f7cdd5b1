/**
 * Sends a query's answer as the lane produces it (api/sql/lanes.ts). The first `bufferBytes` are
 * held: an answer that ends within them goes out whole, with its Content-Length and summary; a
 * longer one goes out as it comes (chunked), each chunk asked of the lane only once the socket
 * took the last one. HTTP compression is zlib's streaming (off this thread, in libuv's pool).
 *
 * Bounds: the answer's bytes as formatted (before HTTP compression: what the client reads once
 * decoded) count against the query's max_result_bytes as the engine holds it (api/sql/lane-
 * worker.ts reads it back); past it the query is cancelled, with a 396 error before the headers
 * are sent, or the connection cut after (never a silent cut). A client that takes no bytes for
 * `clientTimeoutMs` while the answer waits is cut off and its query cancelled.
 */
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import type { LaneRun } from './lanes.ts';
import { ClickHouseHttpError } from './protocol.ts';

export type Encoding = 'gzip' | 'deflate' | 'br';

export interface AnswerOptions {
  res: ServerResponse;
  run: LaneRun;
  headers: Record<string, string>;
  encoding?: Encoding;
  /** zlib level / brotli quality (`http_zlib_compression_level`). */
  level: number;
  maxBytes: number;
  clientTimeoutMs: number;
  bufferBytes: number;
}

const once: Record<Encoding, (b: Buffer, o: object) => Promise<Buffer>> = {
  gzip: promisify(zlib.gzip),
  deflate: promisify(zlib.deflate),
  br: promisify(zlib.brotliCompress),
};

function zlibOptions(encoding: Encoding, level: number): object {
  return encoding === 'br'
    ? { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: Math.min(11, level) } }
    : { level: Math.min(9, level) };
}

function transform(encoding: Encoding, level: number): zlib.Gzip | zlib.Deflate | zlib.BrotliCompress {
  const o = zlibOptions(encoding, level);
  return encoding === 'gzip'
    ? zlib.createGzip(o)
    : encoding === 'deflate'
      ? zlib.createDeflate(o)
      : zlib.createBrotliCompress(o);
}

const tooLarge = (max: number) =>
  new ClickHouseHttpError(
    396,
    `Limit for result exceeded, max bytes: ${max} (the answer's bytes as formatted; sql.limits.maxResultBytes or a lower max_result_bytes)`,
  );

/** Resolves once the answer is sent; throws a ClickHouseHttpError while nothing was sent yet. */
export async function sendAnswer(o: AnswerOptions): Promise<void> {
  const { res, run } = o;
  const held: Buffer[] = [];
  let heldBytes = 0;
  let total = 0;
  let rows = 0;
  /** Set once the headers went out and chunks follow. */
  let out: NodeJS.WritableStream | undefined;
  let closed = false;
  res.once('close', () => {
    if (!res.writableFinished) {
      closed = true;
      run.cancel();
    }
  });
  const cut = () => {
    run.cancel();
    res.destroy();
  };
  /** Writes `b` and waits until the stream takes more, at most clientTimeoutMs. */
  const write = async (b: Buffer) => {
    if (!out || out.write(b)) return;
    const stream = out;
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        stream.off('drain', onDrain);
        res.off('close', onDrain);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = () => done();
      const timer = setTimeout(() => done(new Error('client stopped reading')), o.clientTimeoutMs);
      stream.once('drain', onDrain);
      res.once('close', onDrain);
    });
  };
  const startStreaming = async () => {
    res.writeHead(200, { ...o.headers, ...(o.encoding ? { 'Content-Encoding': o.encoding } : {}) });
    if (o.encoding) {
      const z = transform(o.encoding, o.level);
      z.pipe(res);
      out = z;
    } else out = res;
    for (const b of held.splice(0)) await write(b);
  };
  try {
    for (;;) {
      const m = await run.next();
      if (closed) return;
      if (m.type === 'chunk') {
        total += m.raw;
        rows += m.rows;
        if (total > o.maxBytes) {
          if (out) return cut();
          run.cancel();
          throw tooLarge(o.maxBytes);
        }
        const b = Buffer.from(m.bytes);
        if (out) await write(b);
        else {
          held.push(b);
          heldBytes += b.length;
          if (heldBytes > o.bufferBytes) await startStreaming();
        }
        if (closed) return;
        run.more();
      } else if (m.type === 'end') {
        if (out) {
          out.end();
          return;
        }
        let body: Buffer = Buffer.concat(held);
        const headers: Record<string, string> = {
          ...o.headers,
          'X-ClickHouse-Summary': summary(rows, total),
        };
        if (o.encoding) {
          body = await once[o.encoding](body, zlibOptions(o.encoding, o.level));
          headers['Content-Encoding'] = o.encoding;
        }
        headers['Content-Length'] = String(body.length);
        res.writeHead(200, headers).end(body);
        return;
      } else if (m.type === 'error') {
        if (out) return cut();
        throw new ClickHouseHttpError(m.error.code, m.error.message, undefined, m.error.name);
      }
    }
  } catch (err) {
    if (out) return cut();
    throw err;
  }
}

/** `X-ClickHouse-Summary` of an answer (the engine's stream counts rows and bytes, not what it read). */
export function summary(rows: number, bytes: number): string {
  return JSON.stringify({
    read_rows: '0',
    read_bytes: '0',
    written_rows: '0',
    written_bytes: '0',
    total_rows_to_read: '0',
    result_rows: String(rows),
    result_bytes: String(bytes),
  });
}
