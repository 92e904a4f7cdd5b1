/**
 * Content negotiation of the API's responses: ETag matching, the choice between br and gzip
 * by q-values, the 406 for a client that refuses every coding, and compression of the
 * responses the cache does not serve (streams, CSV exports).
 */
import zlib from 'node:zlib';
import type { Middleware } from 'koa';
import compress from 'koa-compress';
import { ApiError } from './errors.ts';

/** A content coding the API sends. */
export type Encoding = 'gzip' | 'br';

/** True when `If-None-Match` lists `etag` (weak comparison, any encoding variant) or `*`. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const base = etag.slice(1, -1);
  return ifNoneMatch.split(',').some((raw) => {
    const tag = raw.trim().replace(/^W\//, '');
    if (tag === '*') return true;
    const opaque = tag.replace(/^"|"$/g, '').replace(/-(gzip|br)$/, '');
    return opaque === base;
  });
}

/** br or gzip by the client's q-values, br on a tie; false when neither is acceptable. */
export function pickEncoding(acceptEncoding: string): Encoding | false {
  const q = qValues(acceptEncoding);
  const of = (name: string) => q[name] ?? q['*'] ?? 0;
  if (of('br') > 0 && of('br') >= of('gzip')) return 'br';
  return of('gzip') > 0 ? 'gzip' : false;
}

/** The q-value of each coding named in an `Accept-Encoding` header (lower-case names). */
function qValues(acceptEncoding: string): Record<string, number> {
  const q: Record<string, number> = {};
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    if (name) q[name] = Number.isFinite(value) ? value : 0;
  }
  return q;
}

/**
 * 406 `NOT_ACCEPTABLE` (thrown) when the request's `Accept-Encoding` excludes identity
 * (`identity;q=0`, or `*;q=0` without identity) and accepts neither gzip nor br.
 */
export function acceptableEncoding(): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Accept-Encoding');
    if (header) {
      const q = qValues(header);
      const of = (name: string) => q[name] ?? q['*'];
      const identity = q.identity ?? (q['*'] === 0 ? 0 : 1);
      if (identity <= 0 && !((of('gzip') ?? 0) > 0) && !((of('br') ?? 0) > 0))
        throw new ApiError(
          'NOT_ACCEPTABLE',
          'no acceptable content coding: identity, gzip and br are refused',
          {
            headers: { Vary: 'Accept-Encoding' },
          },
        );
    }
    await next();
  };
}

/**
 * gzip/brotli for responses not served by `respondCached` (streams, CSV exports):
 * compressible types above `thresholdBytes`, brotli at quality 4, no deflate.
 */
export function compression(thresholdBytes = 1024): Middleware {
  return compress({
    threshold: thresholdBytes,
    gzip: {},
    br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
    deflate: false,
  });
}
