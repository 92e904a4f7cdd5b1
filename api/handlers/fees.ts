/**
 * Handler of GET /vaults/fees: six daily USD series per vault, every day of the range
 * present (0 when nothing happened), cached per data version through `kit.respond`.
 */
import { validationError } from '../http/errors.ts';
import { makeFeesQuery, parseQuery } from '../http/params.ts';
import { vaultsWatermark } from '../read/activity-watermark.ts';
import { dailyFees } from '../read/fees-daily.ts';
import { loadRegistry, vaultBySlug } from '../read/registry.ts';
import type { HandlerMap } from './types.ts';

/** Longest range answered (ten years and a bit): every day is in the body, so it is bounded. */
const MAX_DAYS = 3700;

export const feesHandlers: HandlerMap = {
  // SQL: views/plain/fees_daily.sql (api/read/fees-daily.ts; docs/queries/api-fees.sql),
  // chain_watermarks.sql.
  'GET /vaults/fees': async (ctx, { store, kit, clock }) => {
    const q = parseQuery(makeFeesQuery(clock), ctx);
    if ((Date.parse(q.endDate) - Date.parse(q.startDate)) / 86_400_000 + 1 > MAX_DAYS)
      throw validationError([
        { in: 'query', path: 'startDate', message: `the range may span at most ${MAX_DAYS} days` },
      ]);
    await kit.respond(ctx, async () => {
      const vaults = q.slug
        ? await Promise.all([...new Set(q.slug)].map((s) => vaultBySlug(store, s)))
        : await loadRegistry(store);
      const data = await dailyFees(store, vaults, q);
      return { body: { data }, watermark: await vaultsWatermark(store, vaults) };
    });
  },
};
