/**
 * Handler of GET /vaults/fees: six daily USD series per vault, every day of the range
 * present (0 when nothing happened), cached per data version through `kit.respond`.
 */

import { VAULT_STATUSES } from '../../core/settings/registry.ts';
import { validationError } from '../http/errors.ts';
import { makeFeesQuery, parseQuery } from '../http/params.ts';
import { vaultsProvenance } from '../read/activity-watermark.ts';
import { dailyFees } from '../read/fees-daily.ts';
import { vaultBySlug } from '../read/registry.ts';
import { vaultsWatermarked } from '../read/vaults-watermarked.ts';
import type { HandlerMap } from './types.ts';

/** Longest range answered (ten years and a bit): every day is in the body, so it is bounded. */
const MAX_DAYS = 3700;

export const feesHandlers: HandlerMap = {
  // SQL: metrics_vault_head (views/migrations/025_metrics_head.sql; the vaults and their
  // watermark, api/read/vaults-watermarked.ts), views/plain/fees_daily.sql
  // (api/read/fees-daily.ts; docs/queries/api-fees.sql); with several slugs, or before the first
  // settle, vault_registry.sql and chain_watermarks.sql.
  'GET /vaults/fees': async (ctx, { store, kit, clock }) => {
    const q = parseQuery(makeFeesQuery(clock), ctx);
    if ((Date.parse(q.endDate) - Date.parse(q.startDate)) / 86_400_000 + 1 > MAX_DAYS)
      throw validationError([
        { in: 'query', path: 'startDate', message: `the range may span at most ${MAX_DAYS} days` },
      ]);
    await kit.respond(ctx, async () => {
      const slugs = q.slug ? [...new Set(q.slug)] : undefined;
      // Every vault, or one: the vaults and the watermark from their heads in one read
      // (api/read/vaults-watermarked.ts); several slugs: each from the registry.
      const { vaults, watermark, blocks } =
        slugs === undefined || slugs.length === 1
          ? await vaultsWatermarked(store, slugs ? { slug: slugs[0] } : { statuses: VAULT_STATUSES })
          : await (async () => {
              const vaults = await Promise.all(slugs.map((s) => vaultBySlug(store, s)));
              return { vaults, ...(await vaultsProvenance(store, vaults)) };
            })();
      const data = await dailyFees(store, vaults, q);
      return { body: { data }, watermark, blocks };
    });
  },
};
