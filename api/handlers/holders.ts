/**
 * Handlers of the holders endpoints: GET /token-holders (streamed), GET /vaults/holders,
 * GET /vaults/holders-history and GET /vaults/{slug}/holders-history. The cached ones
 * answer through `kit.respond` (per data version, single flight, ETag, compression)
 * with the oldest chain watermark behind the answer.
 */
import { Readable } from 'node:stream';
import { SnapshotVersions, type SnapshotVersionsOptions } from '../../store/snapshot-versions.ts';
import { dropStaleSnapshots } from '../../store/snapshots.ts';
import {
  holdersHistoryQuery,
  noQuery,
  parsePath,
  parseQuery,
  slugPath,
  vaultsHoldersHistoryQuery,
  vaultsHoldersQuery,
} from '../http/params.ts';
import { answerMeta, type Provenance, setProvenance, streamWithMeta, wantsMeta } from '../http/provenance.ts';
import { chainsProvenance, vaultsProvenance } from '../read/activity-watermark.ts';
import { holderHistory } from '../read/holders-history.ts';
import { snapshotTokenHolders, type TokenHolderSnapshot } from '../read/holders-token-holders.ts';
import { topHolders } from '../read/holders-top.ts';
import { loadRegistry } from '../read/registry.ts';
import { vaultsWatermarked } from '../read/vaults-watermarked.ts';
import { TOKEN_HOLDERS_SNAPSHOT } from '../snapshot-readiness.ts';
import type { HandlerDeps, HandlerMap } from './types.ts';

/** A token-holders snapshot and its provenance (the oldest chain watermark and the blocks), read before it. */
export type WatermarkedSnapshot = TokenHolderSnapshot & Provenance;

export type TokenHolderSnapshots = SnapshotVersions<WatermarkedSnapshot>;

const perApi = new WeakMap<object, TokenHolderSnapshots>();

/**
 * The shared GET /token-holders snapshots of the API given `deps` (one set per app, keyed by
 * the deps object): the first call starts the first build. `overrides` are for tests.
 */
export function tokenHolderSnapshotsOf(
  deps: Pick<HandlerDeps, 'store' | 'config' | 'log' | 'dataVersion' | 'snapshots'>,
  overrides: Partial<SnapshotVersionsOptions<WatermarkedSnapshot>> = {},
): TokenHolderSnapshots {
  let s = perApi.get(deps);
  if (!s) {
    const { store, config, log } = deps;
    s = new SnapshotVersions<WatermarkedSnapshot>({
      name: 'token-holders',
      log,
      // Without a data version (stand-in apps), the lone-API rule of cli/roles.ts: a new one every 5 s.
      version: deps.dataVersion ?? (() => Math.floor(Date.now() / 5000)),
      build: async () => {
        const vaults = await loadRegistry(store);
        // Read first: the snapshot holds at least the data this provenance vouches for.
        const provenance = await vaultsProvenance(store, vaults);
        const snapshot = await snapshotTokenHolders(store, vaults, { dataDir: config.dataDir });
        return Object.assign(snapshot, provenance);
      },
      sweep: async (inUse) => {
        await dropStaleSnapshots(store, { keep: inUse.map((x) => x.table.split('.').pop() as string) });
      },
      // Readiness waits for a snapshot of the data it is ready with (api/snapshot-readiness.ts).
      onCurrent: (_, { builtAtMs }) => deps.snapshots?.built({ name: TOKEN_HOLDERS_SNAPSHOT, builtAtMs }),
      ...overrides,
    });
    perApi.set(deps, s);
    const set = s;
    deps.snapshots?.onRefresh(TOKEN_HOLDERS_SNAPSHOT, () => set.refresh());
    s.start();
  }
  return s;
}

const nowSeconds = (clock: () => number) => Math.floor(clock() / 1000);

export const holdersHandlers: HandlerMap = {
  // SQL: views/plain/token_holder_values.sql (api/read/holders-token-holders.ts;
  // docs/queries/api-token-holders.sql).
  'GET /token-holders': async (ctx, deps) => {
    parseQuery(noQuery, ctx);
    const meta = wantsMeta(ctx);
    // A failed build answers the 500 `{ error, code }` of the error handler; then the body
    // streams from the newest complete snapshot (even while a newer one builds), or from the
    // first one as it is encoded: the bytes of one encoding, read from its file.
    const lease = await tokenHolderSnapshotsOf(deps).acquire();
    const { watermark, blocks } = lease.snapshot;
    const chunks = meta
      ? streamWithMeta(
          lease.snapshot.body(),
          answerMeta(watermark, blocks, Math.floor(lease.builtAtMs / 1000)),
        )
      : lease.snapshot.body();
    const body = Readable.from(chunks, { objectMode: false });
    // Ended, failed or abandoned (even before the first read): the reader lets go.
    body.once('close', () => void lease.release());
    setProvenance(ctx, { watermark, blocks });
    ctx.set('X-Data-Version', lease.version);
    ctx.set('X-Snapshot-Age', String(Math.max(0, Math.floor((Date.now() - lease.builtAtMs) / 1000))));
    if (lease.stale) ctx.set('X-Snapshot-Stale', '1');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = body;
  },

  // SQL: metrics_top_holders and metrics_vault_current (views/migrations/024, 018), the rows of
  // views/plain/vault_top_holders.sql and vault_holders.sql (api/read/holders-top.ts;
  // docs/queries/api-vault-holders.sql); the vaults and their watermark from metrics_vault_head
  // (migration 025; api/read/vaults-watermarked.ts), as in the holders-history routes.
  'GET /vaults/holders': async (ctx, { store, kit }) => {
    const q = parseQuery(vaultsHoldersQuery, ctx);
    await kit.respond(ctx, async () => {
      const { vaults, holders, ...ofVaults } = await vaultsWatermarked(store, { statuses: q.statuses });
      const data = await topHolders(store, vaults, q.chainId, holders);
      const provenance = q.chainId === undefined ? ofVaults : await chainsProvenance(store, [q.chainId]);
      return { body: { data }, ...provenance };
    });
  },

  // SQL: metrics_holders_daily (views/migrations/024), the rows of views/plain/holder_history_daily.sql
  // (api/read/holders-history.ts; docs/queries/api-holders-history.sql).
  'GET /vaults/holders-history': async (ctx, { store, kit, clock }) => {
    const q = parseQuery(vaultsHoldersHistoryQuery, ctx);
    await kit.respond(ctx, async () => {
      const { vaults, watermark, blocks } = await vaultsWatermarked(store, { statuses: q.statuses });
      const data = await holderHistory(store, vaults, {
        startDate: q.startDate,
        endDate: q.endDate ?? nowSeconds(clock),
      });
      return { body: { data }, watermark, blocks };
    });
  },

  // SQL: metrics_holders_daily, as above.
  'GET /vaults/{slug}/holders-history': async (ctx, { store, kit, clock }) => {
    const { slug } = parsePath(slugPath, ctx);
    const q = parseQuery(holdersHistoryQuery, ctx);
    await kit.respond(ctx, async () => {
      const { vaults, watermark, blocks } = await vaultsWatermarked(store, { slug });
      const [data] = await holderHistory(store, vaults, {
        startDate: q.startDate,
        endDate: q.endDate ?? nowSeconds(clock),
      });
      return { body: { data }, watermark, blocks };
    });
  },
};
