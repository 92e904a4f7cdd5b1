/**
 * performance-history as CSV (docs/architecture.md, Endpoint semantics): a header row, one row per day,
 * columns `day,date,price,tvl,liquidFunds`, then `apy_*` and `navApy_*` (rolling7d,
 * rolling30d, sec30d; empty while the day is unsettled) and, when assets are
 * included, one group `<slug>_price,<slug>_apy7d,<slug>_apy30d,<slug>_compositionPct`
 * per targetComposition item (empty on days without its snapshot).
 */
import { toCsv } from '../http/csv.ts';
import type { PerformanceHistory } from './history-performance.ts';
import type { ApyBlock } from './history-types.ts';

const APY_MEMBERS = ['rolling7d', 'rolling30d', 'sec30d'] as const;
const ASSET_MEMBERS = ['price', 'apy7d', 'apy30d', 'compositionPct'] as const;

/** The CSV columns of a history, asset groups included when `withAssets`. */
export function performanceCsvColumns(h: PerformanceHistory, withAssets: boolean): string[] {
  return [
    'day',
    'date',
    'price',
    'tvl',
    'liquidFunds',
    ...APY_MEMBERS.map((m) => `apy_${m}`),
    ...APY_MEMBERS.map((m) => `navApy_${m}`),
    ...(withAssets ? h.assets.flatMap((a) => ASSET_MEMBERS.map((m) => `${a.slug}_${m}`)) : []),
  ];
}

const apyCells = (prefix: string, block: ApyBlock | null) =>
  Object.fromEntries(APY_MEMBERS.map((m) => [`${prefix}_${m}`, block?.[m] ?? null]));

/** The history rendered as CSV text. */
export function performanceCsv(h: PerformanceHistory, withAssets: boolean): string {
  const rows = h.history.map((e) => ({
    day: e.day,
    date: new Date(e.day * 1000).toISOString().slice(0, 10),
    price: e.vault.price,
    tvl: e.vault.tvl,
    liquidFunds: e.vault.liquidFunds,
    ...apyCells('apy', e.vault.apy),
    ...apyCells('navApy', e.vault.navApy),
    ...Object.fromEntries(
      Object.entries(e.assets).flatMap(([slug, a]) => ASSET_MEMBERS.map((m) => [`${slug}_${m}`, a[m]])),
    ),
  }));
  return toCsv(rows, performanceCsvColumns(h, withAssets));
}
