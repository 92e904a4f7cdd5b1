/**
 * Handlers of the vaults endpoints: GET /vaults, /vaults/details, /vaults/{slug}
 * and /vaults/{slug}/details-lite, answered from the settled head (api/read/vault-head.ts) and
 * the volume and open redemptions at the API clock (api/read/vault-flows.ts), through the
 * response cache, with the oldest chain watermark of the vaults.
 *
 * `liveLiquidity=true`: balances are read from the chains at request time (the
 * configured chains' RPC, api/read/vault-live-liquidity.ts, or the reader given to
 * `makeVaultsHandlers`), uncached, falling back to the snapshots when a chain cannot
 * be read. Either way `X-Liquidity-Source` says which.
 */

import type { Context } from 'koa';
import {
  detailsLiteQuery,
  parsePath,
  parseQuery,
  slugPath,
  vaultDetailsQuery,
  vaultsQuery,
} from '../http/params.ts';
import { answerMeta, type Provenance, setProvenance, wantsMeta } from '../http/provenance.ts';
import type { RegistryVault } from '../read/registry.ts';
import { vaultBySlug, vaultsWithStatus } from '../read/registry.ts';
import type { LiquiditySource, LiveLiquidityReader } from '../read/vault-composition.ts';
import { loadContexts } from '../read/vault-context.ts';
import { loadFlows } from '../read/vault-flows.ts';
import { type HeadSelection, loadHeadNows } from '../read/vault-head.ts';
import { liquidityReaderFor } from '../read/vault-live-liquidity.ts';
import {
  detailsLiteOf,
  detailsOf,
  type VaultAggregates,
  type VaultNow,
  vaultInfoOf,
  vaultNow,
} from '../read/vault-metrics.ts';
import type { HandlerDeps, HandlerMap } from './types.ts';

/** 24 h volume and (for details) open redemptions of `vaults` at the API clock. */
const aggregates = (deps: HandlerDeps, vaults: RegistryVault[], pending: boolean): Promise<VaultAggregates> =>
  loadFlows(deps.store, vaults, Math.floor(deps.clock() / 1000), pending);

/**
 * What the vault resources are computed from for the selected vaults (api/read/vault-metrics.ts
 * `VaultNow`), with their aggregates (volume24h; open redemptions when `pending`) at the API
 * clock: their heads (api/read/vault-head.ts, then the flows) when every head is of today and
 * balances are not read live, else the registry and the days (api/read/vault-context.ts) and the
 * flows (api/read/vault-flows.ts).
 */
async function nowsOf(
  deps: HandlerDeps,
  which: HeadSelection,
  days: 'head' | 'head-live',
  pending: boolean,
): Promise<Provenance & { nows: VaultNow[]; agg: VaultAggregates }> {
  if (days === 'head') {
    const head = await loadHeadNows(deps.store, which, deps.clock(), pending);
    if (head) return { nows: head.nows, watermark: head.watermark, blocks: head.blocks, agg: head.flows };
  }
  const vaults =
    'slug' in which
      ? [await vaultBySlug(deps.store, which.slug)]
      : await vaultsWithStatus(deps.store, which.statuses);
  const { contexts, watermark, blocks } = await loadContexts(deps.store, vaults, deps.clock(), days);
  return { nows: contexts.map(vaultNow), watermark, blocks, agg: await aggregates(deps, vaults, pending) };
}

/** What a details loader produces for a given live reader. */
type DetailsLoad = (
  live?: LiveLiquidityReader,
) => Promise<Provenance & { data: unknown; source: LiquiditySource }>;

/** Answers a details read: cached from the snapshots, or uncached with live balances when asked and possible. */
async function answerDetails(
  ctx: Context,
  deps: HandlerDeps,
  liveLiquidity: boolean,
  live: LiveLiquidityReader | undefined,
  load: DetailsLoad,
): Promise<void> {
  if (liveLiquidity) {
    const meta = wantsMeta(ctx);
    const r = await load(live ?? liquidityReaderFor(deps.config));
    ctx.set('X-Liquidity-Source', r.source);
    ctx.set('Cache-Control', 'no-store');
    setProvenance(ctx, r);
    const now = Math.floor(deps.clock() / 1000);
    ctx.body = meta ? { data: r.data, meta: answerMeta(r.watermark, r.blocks, now) } : { data: r.data };
    return;
  }
  await deps.kit.respond(ctx, async () => {
    const r = await load();
    return { body: { data: r.data }, watermark: r.watermark, blocks: r.blocks };
  });
}

/** The handlers, reading live liquid balances through `live` when given, else from the configured chains. */
export function makeVaultsHandlers(live?: LiveLiquidityReader): HandlerMap {
  return {
    // SQL: metrics_vault_head (views/migrations/025_metrics_head.sql; api/read/vault-head.ts),
    // written by views/settle.ts from the tables below, views/plain/vault_registry.sql and
    // vault_settlement.sql; metrics_volume (025, settled from transactions.sql;
    // api/read/vault-flows.ts). When the head is not of today or with liveLiquidity=true:
    // views/plain/vault_registry.sql (api/read/registry.ts), chain_watermarks.sql and the vault
    // context (api/read/vault-context.ts, vault-data.ts, prices.ts): the tables of
    // views/migrations/018_metrics_tables.sql (metrics_vault_daily, metrics_chain_daily,
    // metrics_vault_current), settled from views/plain/vault_liquidity_daily.sql,
    // composition_apy_daily.sql, vault_price_daily.sql, nav_apy_daily.sql, vault_price_current.sql,
    // vault_holders.sql (views/settle.ts); with liveLiquidity=true, today's liquid-asset prices
    // from liquid_funds_asset_daily.sql.
    'GET /vaults': async (ctx, deps) => {
      const { statuses } = parseQuery(vaultsQuery, ctx);
      await deps.kit.respond(ctx, async () => {
        const { nows, watermark, blocks, agg } = await nowsOf(deps, { statuses }, 'head', false);
        return { body: { data: nows.map((n) => vaultInfoOf(n, agg)) }, watermark, blocks };
      });
    },

    // SQL: as GET /vaults.
    'GET /vaults/{slug}': async (ctx, deps) => {
      const { slug } = parsePath(slugPath, ctx);
      await deps.kit.respond(ctx, async () => {
        const { nows, watermark, blocks, agg } = await nowsOf(deps, { slug }, 'head', false);
        return { body: { data: vaultInfoOf(nows[0], agg) }, watermark, blocks };
      });
    },

    // SQL: as GET /vaults, plus metrics_pending_redemptions (migration 021, settled from
    // views/plain/pending_redemptions.sql; api/read/vault-flows.ts;
    // docs/queries/api-vault-numbers.sql).
    'GET /vaults/details': async (ctx, deps) => {
      const { statuses, liveLiquidity } = parseQuery(vaultDetailsQuery, ctx);
      await answerDetails(ctx, deps, liveLiquidity, live, async (reader) => {
        const days = reader ? 'head-live' : 'head';
        const { nows, watermark, blocks, agg } = await nowsOf(deps, { statuses }, days, true);
        const answers = await Promise.all(nows.map((n) => detailsOf(n, agg, reader)));
        // One vault read from its snapshot makes the whole answer a snapshot answer.
        const source =
          answers.every((a) => a.liquiditySource === 'live') && answers.length ? 'live' : 'snapshot';
        return { data: answers.map((a) => a.value), watermark, blocks, source };
      });
    },

    // SQL: as GET /vaults.
    'GET /vaults/{slug}/details-lite': async (ctx, deps) => {
      const { slug } = parsePath(slugPath, ctx);
      const { liveLiquidity } = parseQuery(detailsLiteQuery, ctx);
      await answerDetails(ctx, deps, liveLiquidity, live, async (reader) => {
        const days = reader ? 'head-live' : 'head';
        const { nows, watermark, blocks, agg } = await nowsOf(deps, { slug }, days, false);
        const answer = await detailsLiteOf(nows[0], agg, reader);
        return { data: answer.value, watermark, blocks, source: answer.liquiditySource };
      });
    },
  };
}

export const vaultsHandlers: HandlerMap = makeVaultsHandlers();
