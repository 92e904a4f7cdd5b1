/**
 * GET /vaults/apy-history: per vault, the settled UTC days of its history in the
 * range (the current day is never settled: its end is after now), each with
 * compositionApy (and its legacy alias `apy`) and navApy on the requested chain;
 * and the vault's data-source errors whose time falls in the range.
 */
import type { z } from 'zod';
import type { Store } from '../../store/client.ts';
import type { apyHistoryItem } from '../http/responses.ts';
import { type DayRange, historyDays } from './history-days.ts';
import { NULL_APY } from './history-types.ts';
import { SHORT_READ } from './short-read.ts';
import { isSettled, navApy, type VaultContext, vaultDay } from './vault-days.ts';

export type ApyHistory = z.infer<typeof apyHistoryItem>;
export type SourceError = ApyHistory['errors'][number];

/**
 * vault slug -> its data-source errors with time in [from, to]: the `limit` most recent,
 * ordered by time as `order` says, and how many there are in all.
 */
export async function loadSourceErrors(
  store: Store,
  slugs: readonly string[],
  from: number,
  to: number,
  order: 'asc' | 'desc',
  limit = 100,
): Promise<Map<string, { errors: SourceError[]; total: number }>> {
  // Newest first, the `limit` most recent of each vault; `total` counts them all (the window is
  // computed before LIMIT BY). One flat statement: a subquery to reorder costs it more than the sort
  // below. The rows of the `source_errors` view (views/plain/source_errors.sql), which is
  // `source_errors_raw FINAL`, read from the table: through the view, 1 ms more a statement.
  const rows = await store.query<{
    vault: string;
    source: string;
    operation: string;
    message: string;
    code: string;
    ts: number;
    total: string;
  }>(
    `SELECT vault, source, operation, message, code, toUnixTimestamp(ts) AS ts,
       count() OVER (PARTITION BY vault) AS total
     FROM ${store.database}.source_errors_raw FINAL
     WHERE vault IN {slugs:Array(String)} AND ts >= toDateTime({from:UInt32}) AND ts <= toDateTime({to:UInt32})
     ORDER BY ts DESC, source, operation
     LIMIT {limit:UInt32} BY vault ${SHORT_READ}`,
    { slugs, from, to, limit },
  );
  // Oldest first: a stable sort on the time keeps source and operation ascending among equals.
  if (order === 'asc') rows.sort((a, b) => Number(a.ts) - Number(b.ts));
  const out = new Map<string, { errors: SourceError[]; total: number }>();
  for (const r of rows) {
    const entry = out.get(r.vault) ?? { errors: [], total: Number(r.total) };
    entry.errors.push({
      source: r.source,
      operation: r.operation,
      message: r.message,
      code: r.code,
      timestamp: Number(r.ts),
    });
    out.set(r.vault, entry);
  }
  return out;
}

/** The APY history of the context's vault over `range`, navApy from the closes of `chainId`. */
export function apyHistoryOf(
  ctx: VaultContext,
  range: DayRange & { chainId: number },
  errors: SourceError[],
  errorsTotal = errors.length,
): ApyHistory {
  const history = historyDays(ctx, range)
    .filter((day) => isSettled(ctx, day))
    .map((day) => {
      // composition_apy_daily and nav_apy_daily (views/plain), looked up per settled day.
      const composition = vaultDay(ctx, day)?.compositionApy ?? NULL_APY;
      return {
        day,
        settled: true as const,
        apy: composition,
        compositionApy: composition,
        navApy: navApy(ctx, range.chainId, day),
      };
    });
  return { vaultAddress: ctx.vault.vaultAddress, history, errors, errorsTotal };
}
