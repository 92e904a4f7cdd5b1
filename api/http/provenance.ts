/**
 * What every JSON answer says it stands on (docs/architecture.md#provenance): `X-Data-Watermark`,
 * the oldest chain watermark behind it (ISO 8601 block time); `X-Data-Blocks`, per chain the
 * answer reads the newest stored block whose events it holds (`98866=1234,1=5678`); and, behind
 * the opt-in `?meta=1`, the same beside `data` as `meta: { watermark, blocks, settledThrough }`, so
 * the shapes of the specification stay as they are by default.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import { validationError } from './errors.ts';

/** Chain id -> block number (Solana: slot). */
export type ChainBlocks = Record<number, number>;

/** The provenance of an answer. */
export interface Provenance {
  /** Unix seconds of the oldest watermark among the answer's chains; null when there is none. */
  watermark: number | null;
  /** Per chain of the answer that has a watermark: the newest block whose events the answer holds. */
  blocks: ChainBlocks;
}

/** `meta` of an answer asked with `?meta=1`. */
export interface AnswerMeta {
  /** Unix seconds (X-Data-Watermark); null without a watermark. */
  watermark: number | null;
  /** Chain id (a string key, as JSON has) -> block (X-Data-Blocks). */
  blocks: ChainBlocks;
  /** Start (Unix seconds) of the latest UTC day whose end the watermark is past; null without one. */
  settledThrough: number | null;
}

const DAY = 86_400;

/** The `meta` query parameter, accepted by every JSON GET (docs: the `Meta` parameter of the OpenAPI document). */
export const metaParam = z
  .enum(['0', '1', 'false', 'true'])
  .optional()
  .transform((v) => v === '1' || v === 'true')
  .meta({
    description:
      'With `1` (or `true`) a JSON answer carries `meta: { watermark, blocks, settledThrough }` beside `data`: the oldest chain watermark behind it (Unix seconds, as `X-Data-Watermark`), per chain the newest stored block whose events it holds (as `X-Data-Blocks`), and the start of the latest UTC day settled for every chain behind it (Unix seconds; null without a watermark). Default: no `meta`, the shapes as specified.',
  });

/** True when the request asks for `meta` (`?meta=1`); a bad value is a 400 like any parameter's. */
export function wantsMeta(ctx: Pick<Context, 'query'>): boolean {
  const raw = ctx.query.meta;
  if (Array.isArray(raw))
    throw validationError([{ in: 'query', path: 'meta', message: 'parameter given more than once' }]);
  const parsed = metaParam.safeParse(raw);
  if (!parsed.success)
    throw validationError([{ in: 'query', path: 'meta', message: 'expected one of 0, 1, false, true' }]);
  return parsed.data;
}

/** `X-Data-Blocks`: `chain=block` pairs by chain id, comma-separated; undefined when there are none. */
export function blocksHeader(blocks: ChainBlocks | undefined): string | undefined {
  const pairs = Object.entries(blocks ?? {})
    .map(([c, b]) => [Number(c), b] as const)
    .sort((a, b) => a[0] - b[0]);
  return pairs.length ? pairs.map(([c, b]) => `${c}=${b}`).join(',') : undefined;
}

/** Unix seconds of a watermark given as Unix seconds, an ISO string or a Date; null for none. */
export function watermarkSeconds(w: string | number | Date | null | undefined): number | null {
  if (w === undefined || w === null) return null;
  if (typeof w === 'number') return w;
  const ms = w instanceof Date ? w.getTime() : Date.parse(w);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/**
 * The `meta` of an answer at `nowSeconds`: a UTC day is settled once every chain behind the
 * answer is past its end (the watermark is the oldest of them), capped at the clock.
 */
export function answerMeta(watermark: number | null, blocks: ChainBlocks, nowSeconds: number): AnswerMeta {
  const through = watermark === null ? null : Math.min(watermark, nowSeconds);
  const settled = through === null ? null : through - (through % DAY) - DAY;
  return { watermark, blocks, settledThrough: settled !== null && settled >= 0 ? settled : null };
}

/** The bytes of a JSON answer (`{"data":...}`, never an empty object) with `"meta": meta` added last. */
export function withMeta(json: Buffer, meta: AnswerMeta): Buffer {
  const end = json.lastIndexOf(0x7d); // its closing brace
  return Buffer.concat([json.subarray(0, end), Buffer.from(`,"meta":${JSON.stringify(meta)}}`)]);
}

/** A streamed JSON answer's chunks with `"meta": meta` added last (the last chunk holds the closing brace). */
export async function* streamWithMeta(
  chunks: AsyncIterable<Buffer>,
  meta: AnswerMeta,
): AsyncGenerator<Buffer> {
  let last: Buffer | undefined;
  for await (const chunk of chunks) {
    if (!chunk.length) continue;
    if (last) yield last;
    last = chunk;
  }
  if (last) yield withMeta(last, meta);
}

/** Sets `X-Data-Watermark` and `X-Data-Blocks` on an answer not served through the cache. */
export function setProvenance(ctx: Pick<Context, 'set'>, p: Provenance): void {
  if (p.watermark !== null) ctx.set('X-Data-Watermark', new Date(p.watermark * 1000).toISOString());
  const blocks = blocksHeader(p.blocks);
  if (blocks) ctx.set('X-Data-Blocks', blocks);
}
