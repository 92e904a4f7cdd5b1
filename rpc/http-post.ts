/**
 * The JSON-RPC transport's default HTTP client (rpc/evm-transport.ts): a POST over node:http or
 * node:https, connections kept alive per origin, answering the few parts of `fetch`'s `Response`
 * the transport reads. The global `fetch` (undici) cost the ingester about a third of its main
 * thread on the sparse-chain benchmark (bench/sparse-backfill.ts: a request clone and body tee
 * per call, stream plumbing per chunk of a megabytes-long eth_getLogs answer); this reads the
 * answer's chunks into one buffer. Like `fetch`, it asks for compressed answers (gzip, deflate,
 * br) and inflates them; `signal` aborts the request and the reading of its answer.
 *
 * With `stream: true` it resolves as soon as the answer's headers are in and `body` yields the
 * inflated chunks as they come, for answers too large to hold as one string (V8's longest is
 * about 512 MiB; a Solana mint's full account read can pass it): the caller parses them as they
 * arrive and nothing holds the whole answer.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** What the transport reads of an answer (a subset of `fetch`'s `Response`). */
export interface PostAnswer {
  status: number;
  ok: boolean;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  /** The (inflated) body's chunks, read once, instead of `text()` (as `fetch`'s `Response.body`). */
  body: AsyncIterable<Uint8Array> | null;
}

/** A `fetch`-shaped POST: `init.body` a string. */
export type Post = (
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    signal?: AbortSignal;
    /** Resolve at the headers, the body read through `body` (else once the whole answer is read). */
    stream?: boolean;
  },
) => Promise<PostAnswer>;

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/** POSTs `init.body` to `url`; resolves once the whole answer is read (and inflated), or at its headers with `stream`. */
export const httpPost: Post = (url, init) =>
  new Promise<PostAnswer>((resolve, reject) => {
    const u = new URL(url);
    const secure = u.protocol === 'https:';
    if (!secure && u.protocol !== 'http:') throw new TypeError(`not an http(s) URL: ${url}`);
    const body = Buffer.from(init.body ?? '', 'utf8');
    const req = (secure ? httpsRequest : httpRequest)(
      u,
      {
        method: init.method ?? 'POST',
        agent: secure ? agents.https : agents.http,
        signal: init.signal,
        headers: {
          ...init.headers,
          'content-length': String(body.length),
          'accept-encoding': 'gzip, deflate, br',
        },
      },
      (res) => {
        const stream = inflated(res);
        const status = res.statusCode ?? 0;
        const answer = (text: () => Promise<string>, chunks: AsyncIterable<Uint8Array> | null) => ({
          status,
          ok: status >= 200 && status < 300,
          headers: { get: (name: string) => headerOf(res, name) },
          text,
          body: chunks,
        });
        const cutOff = () => new Error(`the answer from ${u.origin} was cut off`);
        if (init.stream) {
          // A connection closed before the end makes the iteration throw (as the whole read rejects).
          res.on('close', () => {
            if (!res.complete) stream.destroy(cutOff());
          });
          resolve(answer(() => readAll(stream), stream as AsyncIterable<Uint8Array>));
          return;
        }
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', reject);
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(cutOff());
        });
        stream.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve(answer(async () => text, null));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

function headerOf(res: IncomingMessage, name: string): string | null {
  const v = res.headers[name.toLowerCase()];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/** The answer's body, inflated as its content-encoding says. */
function inflated(res: IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return res.pipe(createGunzip());
  if (encoding === 'deflate') return res.pipe(createInflate());
  if (encoding === 'br') return res.pipe(createBrotliDecompress());
  return res;
}
