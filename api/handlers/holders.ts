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
import { type SnapshotLease, tokenHolderSnapshots } from '../read/holders-snapshots.ts';
import { topHolders } from '../read/holders-top.ts';
import { vaultBySlug, vaultsWithStatus } from '../read/registry.ts';
import type { HandlerDeps, HandlerMap } from './types.ts';

/** Rows per page read from the snapshot (and per chunk written). */
const TOKEN_HOLDER_PAGE = 10_000;

/** The response body of GET /token-holders, one page of rows per chunk. */
async function* tokenHoldersBody({ snapshot }: SnapshotLease): AsyncGenerator<string> {
  yield '{"data":{"holders":[';
  let first = true;
  for await (const page of snapshot.pages(TOKEN_HOLDER_PAGE)) {
    const json = page.map((h) => JSON.stringify(h)).join(',');
    yield first ? json : `,${json}`;
    first = false;
  }
  yield `],"count":${snapshot.count}}}`;
}

/** The shared token-holders snapshots of the API given `deps`; the first call starts the first build. */
export function tokenHolderSnapshotsOf(deps: HandlerDeps) {
  // Without a data version (stand-in apps), the lone-API rule of cli/roles.ts: a new one every 5 s.
  const version = deps.dataVersion ?? (() => Math.floor(Date.now() / 5000));
  return tokenHolderSnapshots(deps, { store: deps.store, version, log: deps.log });
}

const nowSeconds = (clock: () => number) => Math.floor(clock() / 1000);

export const holdersHandlers: HandlerMap = {
  'GET /token-holders': async (ctx, deps) => {
    parseQuery(noQuery, ctx);
    // A failed build answers the 500 `{ error, code }` of the error handler; then the body
    // streams from the newest complete snapshot, a page per read, even while a newer one builds.
    const lease = await tokenHolderSnapshotsOf(deps).acquire();
    const body = Readable.from(tokenHoldersBody(lease), { objectMode: false });
    // Ended, failed or abandoned (even before the first read): the reader lets go.
    body.once('close', () => void lease.release());
    if (lease.watermark !== null) ctx.set('X-Data-Watermark', new Date(lease.watermark * 1000).toISOString());
    ctx.set('X-Data-Version', lease.version);
    ctx.set('X-Snapshot-Age', String(Math.max(0, Math.floor((Date.now() - lease.builtAtMs) / 1000))));
    if (lease.stale) ctx.set('X-Snapshot-Stale', '1');
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
