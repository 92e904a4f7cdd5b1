/**
 * GET /vaults/fees: six daily USD series per vault from `fees_daily` (exact 1e-18 USD
 * until output), every day of the range present, 0 on days without fees
 * (docs/architecture.md#units-and-formulas, Fees).
 */
import type { Store } from '../../store/client.ts';
import { toUnits } from './prices.ts';
import type { RegistryVault } from './registry.ts';

/** Response member of each fee kind of `fees_raw`. */
export const FEE_SERIES = {
  MANAGEMENT: 'managementFee',
  PERFORMANCE: 'performanceFee',
  INSTANT_REDEMPTION: 'instantRedemptionFee',
  DEPOSIT: 'depositFee',
  REDEMPTION: 'redemptionFee',
  CLAIMED: 'feesClaimed',
} as const;
type SeriesName = (typeof FEE_SERIES)[keyof typeof FEE_SERIES];

export interface FeePoint {
  date: string;
  value: number;
}
export type VaultFees = { slug: string } & Record<SeriesName, FeePoint[]>;

const DAY_MS = 86_400_000;

/** Every `YYYY-MM-DD` from `start` to `end` inclusive. */
export function daysBetween(start: string, end: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${start}T00:00:00Z`); t <= Date.parse(`${end}T00:00:00Z`); t += DAY_MS)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** The fee series of `vaults` (in their order) over [startDate, endDate] (UTC days). */
export async function dailyFees(
  store: Store,
  vaults: readonly RegistryVault[],
  range: { startDate: string; endDate: string },
): Promise<VaultFees[]> {
  const rows = await store.query<{ vault: string; day: string; kind: string; usd: string }>(
    `SELECT vault, toString(day) AS day, kind, toString(usd_e18) AS usd FROM ${store.database}.fees_daily
     WHERE vault IN {slugs:Array(String)} AND toString(day) BETWEEN {from:String} AND {to:String}`,
    { slugs: vaults.map((v) => v.slug), from: range.startDate, to: range.endDate },
  );
  const found = new Map(rows.map((r) => [`${r.vault}|${r.kind}|${r.day}`, BigInt(r.usd)]));
  const days = daysBetween(range.startDate, range.endDate);
  return vaults.map((v) => {
    const series = Object.fromEntries(
      Object.entries(FEE_SERIES).map(([kind, name]) => [
        name,
        days.map((date) => ({ date, value: toUnits(found.get(`${v.slug}|${kind}|${date}`) ?? 0n, 18) })),
      ]),
    ) as Record<SeriesName, FeePoint[]>;
    return { slug: v.slug, ...series };
  });
}
