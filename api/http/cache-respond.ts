/**
 * Answering a request from the response cache (api/http/cache.ts): the key from the
 * validated query, the cache headers (`ETag`, `Cache-Control`, `Vary`,
 * `X-Data-Watermark`, `X-Data-Blocks`), 304 on a matching `If-None-Match`, the body compressed
 * when accepted, and with `?meta=1` the JSON answer with its `meta` (api/http/provenance.ts).
 */
import type { Context } from 'koa';
import type { ResponseCache } from './cache.ts';
import type { CacheEntry, LoadResult } from './cache-entry.ts';
import { etagMatches, pickEncoding } from './encoding.ts';
import { QUERY_KEY } from './params.ts';
import { wantsMeta, withMeta } from './provenance.ts';

/** The entry's JSON body with its `meta` (a strong ETag of its own): the entry's `?meta=1` variant. */
function metaEntry(entry: CacheEntry): CacheEntry {
  const body = withMeta(entry.body, entry.meta);
  return { ...entry, body, etag: `${entry.etag.slice(0, -1)}.meta"`, encoded: {}, bytes: body.length };
}

const isJson = (entry: CacheEntry) => entry.contentType.startsWith('application/json');

/** Sorts a query string's parameters by name (keeping the order of repeated ones) so equal queries share a key. */
export function normalizeQuery(querystring: string): string {
  if (!querystring) return '';
  return querystring
    .split('&')
    .filter(Boolean)
    .map((part, i) => ({ name: part.split('=', 1)[0], part, i }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.i - b.i))
    .map((p) => p.part)
    .join('&');
}

export interface RespondOptions {
  maxAgeSeconds?: number;
  staleWhileRevalidateSeconds?: number;
  /** Bodies below this size are sent uncompressed. */
  compressMinBytes?: number;
  /** Cache key; default method, path and the validated query (else the normalized query string). */
  key?: string;
  /** Called before a new load starts (a miss that no running load covers): throws to refuse it, else returns its release. */
  admit?: () => () => void;
  /** Called with what was sent (200 only), so the answer can be replayed for the same request (kit's fast path). */
  served?: (ctx: Context, answer: ServedAnswer) => void;
}

/** A 200 answered from the cache: the entry, its stored key, the route and the bytes sent. */
export interface ServedAnswer {
  entry: CacheEntry;
  full: string;
  route: string;
  body: Buffer;
  /** The ETag of what was sent (the entry's, or its `?meta=1` variant's). */
  etag: string;
}

/** The router's path template of the request (`/v1/vaults/:slug`), or `unmatched`. */
export function routeOf(ctx: Context): string {
  return (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
}

/**
 * Answers the request from `cache`: loads on a miss, then sets `ETag`,
 * `Cache-Control: public, max-age=<n>, stale-while-revalidate=<m>`, `Vary`,
 * `X-Data-Watermark` (when the loader gave one) and answers 304 when
 * `If-None-Match` matches, else the body, gzip or brotli when accepted.
 * Validate the request before calling this: a loader's error is thrown here.
 */
export async function respondCached(
  ctx: Context,
  cache: ResponseCache,
  load: () => Promise<LoadResult>,
  opts: RespondOptions = {},
): Promise<void> {
  // HEAD shares GET's entry.
  const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
  // The validated query (parseQuery's canonical form) when the handler parsed one, so a
  // parameter validation ignores (`?_=<random>`) cannot make a new key; else the raw query.
  const parsed = ctx.state?.[QUERY_KEY];
  const query = typeof parsed === 'string' ? `=${parsed}` : normalizeQuery(ctx.querystring);
  const key = opts.key ?? `${method} ${ctx.path}?${query}`;
  const route = routeOf(ctx);
  const meta = wantsMeta(ctx);
  const got = await cache.get(route, key, load, opts.admit);
  const { full } = got;
  const entry = meta && isJson(got.entry) ? cache.variant(got.entry, metaEntry) : got.entry;
  const encoding =
    entry.body.length >= (opts.compressMinBytes ?? 1024) && pickEncoding(ctx.get('Accept-Encoding'));
  ctx.set(
    'Cache-Control',
    `public, max-age=${opts.maxAgeSeconds ?? 5}, stale-while-revalidate=${opts.staleWhileRevalidateSeconds ?? 30}`,
  );
  ctx.vary('Accept-Encoding');
  ctx.set('ETag', encoding ? `${entry.etag.slice(0, -1)}-${encoding}"` : entry.etag);
  if (entry.watermark) ctx.set('X-Data-Watermark', entry.watermark);
  if (entry.blocks) ctx.set('X-Data-Blocks', entry.blocks);
  if (etagMatches(ctx.get('If-None-Match'), entry.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = entry.contentType;
  let body: Buffer;
  if (encoding) {
    body = await cache.encode(entry, encoding);
    ctx.body = body;
    ctx.set('Content-Encoding', encoding);
  } else ctx.body = body = entry.body;
  // Recorded for the fast path under the entry's own version, an earlier one's answer too: the
  // fast path replays it under the same rules as `cache.get` (current and fresh, or
  // ResponseCache.servesPrevious). When the data moves faster than answers are computed, the
  // answer served meanwhile is often one that was never current when asked for.
  opts.served?.(ctx, { entry: got.entry, full, route, body, etag: entry.etag });
}
