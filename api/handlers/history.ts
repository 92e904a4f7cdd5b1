/**
 * Handlers of the history endpoints: GET /vaults/{slug}/performance-history (JSON
 * or CSV) and GET /vaults/apy-history, answered from the views
 * (api/read/history-*.ts) through the response cache, with the oldest chain
 * watermark of the vaults.
 */
import { csvResult } from '../http/csv.ts';
import { apyHistoryQuery, parsePath, parseQuery, performanceHistoryQuery, slugPath } from '../http/params.ts';
import { apyHistoryOf, loadSourceErrors } from '../read/history-apy.ts';
import { performanceCsv } from '../read/history-csv.ts';
import { performanceHistoryOf } from '../read/history-performance.ts';
import { type RegistryVault, vaultBySlug, vaultsWithStatus } from '../read/registry.ts';
import { loadContexts } from '../read/vault-context.ts';
import { loadHeadRangeContexts } from '../read/vault-head.ts';
import { dayStart } from '../read/vault-numbers.ts';
import type { HandlerMap } from './types.ts';

/** The days a history's range can list (api/read/history-days.ts): from the start date's day to the end date. */
const rangeOf = (q: { startDate?: number; endDate?: number }) => ({
  from: q.startDate === undefined ? undefined : dayStart(q.startDate),
  to: q.endDate,
});

export const historyHandlers: HandlerMap = {
  // SQL: metrics_vault_head (views/migrations/025_metrics_head.sql; api/read/vault-head.ts: the
  // vault, watermark, first day and price chain), then metrics_chain_daily and
  // metrics_vault_daily over the range (018; api/read/vault-data.ts), and with
  // includeCompositeAssets metrics_assets_daily (from views/plain/composition_daily.sql); before
  // the first settle the vault context (as GET /vaults in vaults.ts);
  // docs/queries/api-performance-history.sql, api-performance-assets.sql.
  'GET /vaults/{slug}/performance-history': async (ctx, deps) => {
    const { slug } = parsePath(slugPath, ctx);
    const q = parseQuery(performanceHistoryQuery, ctx);
    await deps.kit.respond(ctx, async () => {
      const days = { ...rangeOf(q), assets: q.includeCompositeAssets };
      const { contexts, watermark, blocks } =
        (await loadHeadRangeContexts(deps.store, { slug }, deps.clock(), days)) ??
        (await loadContexts(deps.store, [await vaultBySlug(deps.store, slug)], deps.clock(), days));
      const history = performanceHistoryOf(contexts[0], q);
      if (q.format === 'csv')
        return { ...csvResult(performanceCsv(history, q.includeCompositeAssets), watermark), blocks };
      return { body: { data: history }, watermark, blocks };
    });
  },

  // SQL: as above, and views/plain/source_errors.sql (read as its table, source_errors_raw FINAL;
  // api/read/history-apy.ts; docs/queries/api-apy-history.sql).
  'GET /vaults/apy-history': async (ctx, deps) => {
    const q = parseQuery(apyHistoryQuery, ctx);
    await deps.kit.respond(ctx, async () => {
      const nowMs = deps.clock();
      const now = Math.floor(nowMs / 1000);
      const errorsOf = (vaults: readonly RegistryVault[]) =>
        loadSourceErrors(
          deps.store,
          vaults.map((v) => v.slug),
          q.startDate ?? 0,
          Math.min(q.endDate ?? now, now),
          q.order,
          deps.config.api.maxSourceErrorsPerVault,
        );
      // The errors are read with the days, once the heads named the vaults.
      const loaded =
        (await loadHeadRangeContexts(
          deps.store,
          { statuses: q.statuses },
          nowMs,
          { ...rangeOf(q), chains: [q.chainId], values: false },
          errorsOf,
        )) ??
        (await (async () => {
          const vaults = await vaultsWithStatus(deps.store, q.statuses);
          return {
            vaults,
            ...(await loadContexts(deps.store, vaults, nowMs, rangeOf(q))),
            alongside: undefined,
          };
        })());
      const { contexts, watermark, blocks } = loaded;
      const errors = loaded.alongside ?? (await errorsOf(loaded.vaults));
      const data = contexts.map((c) => {
        const e = errors.get(c.vault.slug);
        return apyHistoryOf(c, q, e?.errors ?? [], e?.total ?? 0);
      });
      return { body: { data }, watermark, blocks };
    });
  },
};
