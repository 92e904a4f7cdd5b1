/**
 * Handlers of the holders endpoints: GET /token-holders (streamed), GET /vaults/holders,
 * GET /vaults/holders-history and GET /vaults/{slug}/holders-history. The cached ones
 * answer through `kit.respond` (per data version, single flight, ETag, compression)
 * with the oldest chain watermark behind the answer.
 */
import { Readable } from 'node:stream';
import {
  holdersHistoryQuery,
  noQuery,
  parsePath,
  parseQuery,
  slugPath,
  vaultsHoldersHistoryQuery,
  vaultsHoldersQuery,
} from '../http/params.ts';
import { oldestWatermark, vaultsWatermark } from '../read/activity-watermark.ts';
import { holderHistory } from '../read/holders-history.ts';
import { snapshotTokenHolders, type TokenHolderSnapshot } from '../read/holders-token-holders.ts';
import { topHolders } from '../read/holders-top.ts';
import { loadRegistry, vaultBySlug, vaultsWithStatus } from '../read/registry.ts';
import type { HandlerMap } from './types.ts';

/** Rows per page read from the snapshot (and per chunk written). */
const TOKEN_HOLDER_PAGE = 10_000;

/** The response body of GET /token-holders, one page of rows per chunk. */
async function* tokenHoldersBody(snap: TokenHolderSnapshot): AsyncGenerator<string> {
  yield '{"data":{"holders":[';
  let first = true;
  for await (const page of snap.pages(TOKEN_HOLDER_PAGE)) {
    const json = page.map((h) => JSON.stringify(h)).join(',');
    yield first ? json : `,${json}`;
    first = false;
  }
  yield `],"count":${snap.count}}}`;
}

const nowSeconds = (clock: () => number) => Math.floor(clock() / 1000);

export const holdersHandlers: HandlerMap = {
  'GET /token-holders': async (ctx, { store }) => {
    parseQuery(noQuery, ctx);
    const vaults = await loadRegistry(store);
    // Failures up to here answer the 500 `{ error, code }` of the error handler; once
    // the snapshot exists the body streams from it, a page per read.
    const snap = await snapshotTokenHolders(store, vaults);
    try {
      const watermark = await vaultsWatermark(store, vaults);
      if (watermark !== null) ctx.set('X-Data-Watermark', new Date(watermark * 1000).toISOString());
    } catch (err) {
      await snap.drop();
      throw err;
    }
    const body = Readable.from(tokenHoldersBody(snap), { objectMode: false });
    // A client gone before the first read never starts the generator: drop here too.
    body.once('close', () => void snap.drop().catch(() => undefined));
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = body;
  },

  'GET /vaults/holders': async (ctx, { store, kit }) => {
    const q = parseQuery(vaultsHoldersQuery, ctx);
    await kit.respond(ctx, async () => {
      const vaults = await vaultsWithStatus(store, q.statuses);
      const data = await topHolders(store, vaults, q.chainId);
      const watermark =
        q.chainId === undefined
          ? await vaultsWatermark(store, vaults)
          : await oldestWatermark(store, [q.chainId]);
      return { body: { data }, watermark };
    });
  },

  'GET /vaults/holders-history': async (ctx, { store, kit, clock }) => {
    const q = parseQuery(vaultsHoldersHistoryQuery, ctx);
    await kit.respond(ctx, async () => {
      const vaults = await vaultsWithStatus(store, q.statuses);
      const data = await holderHistory(store, vaults, {
        startDate: q.startDate,
        endDate: q.endDate ?? nowSeconds(clock),
      });
      return { body: { data }, watermark: await vaultsWatermark(store, vaults) };
    });
  },

  'GET /vaults/{slug}/holders-history': async (ctx, { store, kit, clock }) => {
    const { slug } = parsePath(slugPath, ctx);
    const q = parseQuery(holdersHistoryQuery, ctx);
    await kit.respond(ctx, async () => {
      const vault = await vaultBySlug(store, slug);
      const [data] = await holderHistory(store, [vault], {
        startDate: q.startDate,
        endDate: q.endDate ?? nowSeconds(clock),
      });
      return { body: { data }, watermark: await vaultsWatermark(store, [vault]) };
    });
  },
};
