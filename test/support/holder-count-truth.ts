/**
 * Ground truth of the hourly and daily holder counts, computed from a scenario's own
 * transfer list by replaying balances, independently of the SQL. It follows the documented
 * meaning of the views (docs/views.md):
 * - holder_counts_hourly: per (vault, chain), for every UTC hour from the hour of the first
 *   transfer on, the number of addresses with a positive balance at the end of the hour;
 * - holder_history_daily: per (vault, chain, UTC day) of those samples: start = the count at
 *   00:00 (the previous hour's sample, 0 before the first transfer), end = the day's last
 *   sample, min and max of the day's samples, count = their number (24 for a whole day; the
 *   hours of the first day before the first transfer count as samples of 0).
 * The views sample up to the current hour; the truth covers the hours before `until`.
 */
import { DAY, HOUR } from './events.ts';

/** A transfer on the canonical chain (retracted ones are not in the list). */
export interface TruthTransfer {
  vault: string;
  chainId: number;
  from: string;
  to: string;
  amount: bigint;
  /** Block time, Unix seconds. */
  ts: number;
}

export interface DailyHolderCount {
  start: number;
  end: number;
  min: number;
  max: number;
  count: number;
}

export interface HolderCountTruth {
  /** `${vault}|${chainId}|${YYYY-MM-DD HH:00:00}` (start of the hour) → holders at its end. */
  hourly: Map<string, number>;
  /** `${vault}|${chainId}|${YYYY-MM-DD}` → the day's counts. */
  daily: Map<string, DailyHolderCount>;
  /** `${vault}|${chainId}` → holders after the last transfer (every later hour's sample). */
  final: Map<string, number>;
}

const hourText = (s: number) => new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ');

/**
 * The counts of every hour that ends before `until` (a UTC midnight, Unix seconds), and of
 * every day before it. `zero` (the mint/burn side) holds nothing.
 */
export function holderCountTruth(
  transfers: readonly TruthTransfer[],
  until: number,
  zero: string,
): HolderCountTruth {
  const out: HolderCountTruth = { hourly: new Map(), daily: new Map(), final: new Map() };
  const byPair = new Map<string, TruthTransfer[]>();
  for (const t of transfers) {
    const k = `${t.vault}|${t.chainId}`;
    const list = byPair.get(k);
    if (list) list.push(t);
    else byPair.set(k, [t]);
  }
  for (const [pair, list] of byPair) {
    const sorted = [...list].sort((a, b) => a.ts - b.ts);
    const balance = new Map<string, bigint>();
    let holders = 0;
    const move = (who: string, d: bigint) => {
      if (who === zero) return;
      const before = balance.get(who) ?? 0n;
      const after = before + d;
      balance.set(who, after);
      holders += Number(after > 0n) - Number(before > 0n);
    };
    // Holders at the end of each hour: walk the hours, applying the transfers made in each.
    const first = sorted[0].ts - (sorted[0].ts % HOUR);
    let next = 0;
    const samples: [hour: number, holders: number][] = [];
    for (let h = first; h + HOUR <= until; h += HOUR) {
      while (next < sorted.length && sorted[next].ts < h + HOUR) {
        const t = sorted[next++];
        move(t.from, -t.amount);
        move(t.to, t.amount);
      }
      samples.push([h, holders]);
      out.hourly.set(`${pair}|${hourText(h)}`, holders);
    }
    for (; next < sorted.length; next++) {
      move(sorted[next].from, -sorted[next].amount);
      move(sorted[next].to, sorted[next].amount);
    }
    out.final.set(pair, holders);
    let previous = 0; // the count before the first transfer
    for (const [h, n] of samples) {
      const key = `${pair}|${hourText(h).slice(0, 10)}`;
      const day = out.daily.get(key);
      // The hours of a (vault, chain)'s first day before its first transfer count as samples of 0.
      const leadIn = (h % DAY) / HOUR;
      if (!day)
        out.daily.set(key, {
          start: previous,
          end: n,
          min: leadIn > 0 ? Math.min(0, n) : n,
          max: n,
          count: 1 + leadIn,
        });
      else
        Object.assign(day, {
          end: n,
          min: Math.min(day.min, n),
          max: Math.max(day.max, n),
          count: day.count + 1,
        });
      previous = n;
    }
  }
  return out;
}
