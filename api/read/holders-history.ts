/**
 * Holder counts per (vault, chain, UTC day) as `holder_history_daily` computes them (hourly
 * samples, 24 for a past day; docs/architecture.md, Endpoint semantics), read from
 * `metrics_holders_daily`, where views/settle.ts stores that view's rows (migration 024): the
 * answer reads its own days, not the history.
 */
import type { Store } from '../../store/client.ts';
import type { RegistryVault } from './registry.ts';

export interface HolderHistoryEntry {
  day: number;
  chainId: number;
  start: number;
  end: number;
  min: number;
  max: number;
  average: number;
  count: number;
}

export interface VaultHolderHistory {
  vaultAddress: string;
  history: HolderHistoryEntry[];
}

interface Row {
  vault: string;
  chain_id: number;
  day_unix: string;
  start: string;
  end: string;
  min: string;
  max: string;
  average: number;
  count: string;
}

/**
 * The history of each of `vaults` (in their order) for the days whose 00:00 lies in
 * [startDate, endDate] (Unix seconds), oldest day first, then by chain.
 */
export async function holderHistory(
  store: Store,
  vaults: readonly RegistryVault[],
  range: { startDate?: number; endDate: number },
): Promise<VaultHolderHistory[]> {
  if (vaults.length === 0) return [];
  const rows = await store.query<Row>(
    `SELECT vault, chain_id, toString(toUnixTimestamp(toDateTime(day, 'UTC'))) AS day_unix,
       toString(start) AS start, toString(end) AS end, toString(min) AS min, toString(max) AS max,
       average, toString(count) AS count
     FROM ${store.database}.metrics_holders_daily FINAL
     WHERE vault IN {slugs:Array(String)}
       AND day BETWEEN toDate(toDateTime({from:UInt32}, 'UTC'), 'UTC') AND toDate(toDateTime({to:UInt32}, 'UTC'), 'UTC')
       AND toDateTime(day, 'UTC') >= toDateTime({from:UInt32}, 'UTC')
     ORDER BY vault, day, chain_id`,
    { slugs: vaults.map((v) => v.slug), from: range.startDate ?? 0, to: range.endDate },
  );
  return vaults.map((v) => ({
    vaultAddress: v.vaultAddress,
    history: rows
      .filter((r) => r.vault === v.slug)
      .map((r) => ({
        day: Number(r.day_unix),
        chainId: Number(r.chain_id),
        start: Number(r.start),
        end: Number(r.end),
        min: Number(r.min),
        max: Number(r.max),
        average: Number(r.average),
        count: Number(r.count),
      })),
  }));
}
