/** The UTC days a vault's history covers within a requested range. */
import { firstDay, type VaultContext } from './vault-days.ts';
import { DAY, dayStart } from './vault-numbers.ts';

export interface DayRange {
  /** Unix seconds; the day holding it is the first included. */
  startDate?: number;
  /** Unix seconds; the last included day is the one holding it. */
  endDate?: number;
  order: 'asc' | 'desc';
}

/**
 * Starts of the UTC days from the vault's first close to today (the API clock)
 * that overlap [startDate, endDate], in `order`.
 */
export function historyDays(ctx: VaultContext, range: DayRange): number[] {
  const first = firstDay(ctx);
  if (first === undefined) return [];
  const from = Math.max(first, range.startDate === undefined ? first : dayStart(range.startDate));
  const to = Math.min(dayStart(ctx.now), range.endDate ?? Number.POSITIVE_INFINITY);
  const days: number[] = [];
  for (let d = from; d <= to; d += DAY) days.push(d);
  return range.order === 'desc' ? days.reverse() : days;
}
