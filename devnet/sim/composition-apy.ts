/**
 * The ground truth's compositionApy (docs/architecture.md, Units and formulas), computed from the
 * simulator's own yield prices and holdings, independently of the service's views.
 */
import type { CompositionApyTruth, GroundTruthJson } from './truth-json.ts';

const DAY_MS = 86_400_000;
const dayShift = (day: string, n: number) =>
  new Date(Date.parse(day) + n * DAY_MS).toISOString().slice(0, 10);

/**
 * The value of the latest key at or before `day` of a day-keyed map (null when none). Each map's
 * days are sorted once per call of compositionApyTruth and searched by bisection: the ground truth
 * is rewritten after every live tick on the service's event loop (`npm start` runs the simulator in
 * process), and a scan of every map for every day held that loop for tens of ms each tick
 * (docs/architecture.md#event-loop).
 */
function dayLookup(): (series: Record<string, string> | undefined, day: string) => string | null {
  const sorted = new Map<Record<string, string>, { days: string[]; values: string[] }>();
  return (series, day) => {
    if (!series) return null;
    let s = sorted.get(series);
    if (!s) {
      const days = Object.keys(series).sort();
      s = { days, values: days.map((d) => series[d]) };
      sorted.set(series, s);
    }
    let lo = 0;
    let hi = s.days.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (s.days[mid] <= day) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? null : s.values[lo - 1];
  };
}

/**
 * compositionApy per share and day, independently of the service: weights = USD held of each yield
 * asset over every chain at the day's close (rate x balance), renormalised over the yield assets;
 * asset apyNd = (P(d)/P(d-N) - 1) * 365/N * 100 from the primary chain's close rates.
 */
export function compositionApyTruth(
  primary: number,
  shares: string[],
  yieldPrices: GroundTruthJson['yieldPrices'],
  yieldHoldings: GroundTruthJson['yieldHoldings'],
  lastDay: string,
): GroundTruthJson['compositionApy'] {
  const atOrBefore = dayLookup();
  const prices = yieldPrices[String(primary)] ?? {};
  const slugs = Object.keys(prices).sort();
  const firstDay = slugs.flatMap((s) => Object.keys(prices[s])).sort()[0];
  const out: GroundTruthJson['compositionApy'] = {};
  if (!firstDay) return out;
  const apy = (slug: string, day: string, n: number) => {
    const p = atOrBefore(prices[slug], day);
    const q = atOrBefore(prices[slug], dayShift(day, -n));
    return p === null || q === null ? null : (Number(p) / Number(q) - 1) * (365 / n) * 100;
  };
  for (const share of shares) {
    const byDay: Record<string, CompositionApyTruth> = {};
    for (let day = firstDay; day <= lastDay; day = dayShift(day, 1)) {
      const usd = new Map<string, number>();
      for (const slug of slugs) {
        const p = atOrBefore(prices[slug], day);
        let held = 0n;
        for (const chain of Object.keys(yieldHoldings))
          held += BigInt(atOrBefore(yieldHoldings[chain]?.[share]?.[slug], day) ?? '0');
        usd.set(slug, p === null ? 0 : (Number(held) / 1e6) * (Number(p) / 1e6));
      }
      const total = [...usd.values()].reduce((a, b) => a + b, 0);
      const weights = Object.fromEntries(
        slugs.map((s) => [s, total > 0 ? ((usd.get(s) ?? 0) / total) * 100 : 0]),
      );
      const roll = (n: number) => {
        let num = 0;
        let den = 0;
        for (const s of slugs) {
          const a = apy(s, day, n);
          if (a === null || !weights[s]) continue;
          num += weights[s] * a;
          den += weights[s];
        }
        return den > 0 ? num / den : null;
      };
      const rolling30d = roll(30);
      byDay[day] = {
        rolling7d: roll(7),
        rolling30d,
        sec30d: rolling30d === null ? null : 2 * ((1 + ((rolling30d / 100) * 30) / 365) ** 6 - 1) * 100,
        weights,
      };
    }
    out[share] = byDay;
  }
  return out;
}
