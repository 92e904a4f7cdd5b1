/**
 * One answer of the response cache (api/http/cache.ts): what a loader produces (`LoadResult`), and
 * the entry it is stored as, with its body bytes, strong ETag, provenance headers, the `meta` of
 * `?meta=1` and its compressed variants as they are made.
 */
import { createHash } from 'node:crypto';
import type { Encoding } from './encoding.ts';
import {
  type AnswerMeta,
  answerMeta,
  blocksHeader,
  type ChainBlocks,
  watermarkSeconds,
} from './provenance.ts';

/** What a loader produces: a JSON-serializable value (or a ready string) and the data watermark behind it. */
export interface LoadResult {
  body: unknown;
  /** Default `application/json; charset=utf-8` (the body is JSON-serialized unless it is a string). */
  contentType?: string;
  /** Oldest chain watermark behind the answer: an ISO string, a Date, or Unix seconds. */
  watermark?: string | number | Date | null;
  /** Per chain behind the answer, the newest block whose events it holds (api/http/provenance.ts). */
  blocks?: ChainBlocks;
}

export interface CacheEntry {
  readonly body: Buffer;
  /** The data version the answer was computed under, and its order among the versions seen (set when loaded). */
  version?: string;
  versionNo?: number;
  /** Strong ETag of the identity body, quoted. */
  readonly etag: string;
  readonly contentType: string;
  readonly watermark?: string;
  /** `X-Data-Blocks`, when the answer has blocks. */
  readonly blocks?: string;
  /** What `?meta=1` adds to a JSON answer, as of its load. */
  readonly meta: AnswerMeta;
  readonly expiresAt: number;
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
  bytes: number;
  /** Set on a variant (`ResponseCache.variant`): the stored entry whose bytes count it. */
  parent?: CacheEntry;
}

function watermarkString(w: LoadResult['watermark']): string | undefined {
  if (w === undefined || w === null) return undefined;
  if (w instanceof Date) return w.toISOString();
  if (typeof w === 'number') return new Date(w * 1000).toISOString();
  return w;
}

/** Serializes a load result into a cache entry (body bytes, strong ETag) loaded at `now` (ms). */
export function toEntry(result: LoadResult, expiresAt: number, now = Date.now()): CacheEntry {
  const isText = typeof result.body === 'string' || Buffer.isBuffer(result.body);
  const body = Buffer.isBuffer(result.body)
    ? result.body
    : Buffer.from(isText ? (result.body as string) : JSON.stringify(result.body));
  const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  return {
    body,
    etag,
    contentType:
      result.contentType ?? (isText ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8'),
    watermark: watermarkString(result.watermark),
    blocks: blocksHeader(result.blocks),
    meta: answerMeta(watermarkSeconds(result.watermark), result.blocks ?? {}, Math.floor(now / 1000)),
    expiresAt,
    encoded: {},
    bytes: body.length,
  };
}
