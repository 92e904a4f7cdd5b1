/**
 * Exact arithmetic for the vault metrics: prices, USD values and percentages are
 * bigints scaled by 1e18 ("e18") until the API converts them for output, so a
 * TVL is the exact sum of its chains and a ratio is taken from exact operands.
 */
import { toUnits } from './prices.ts';

export const E18 = 10n ** 18n;
export const DAY = 86_400;

/** Start (Unix seconds) of the UTC day holding `ts`. */
export function dayStart(ts: number): number {
  return ts - (((ts % DAY) + DAY) % DAY);
}

/** Start (Unix seconds) of a UTC day written YYYY-MM-DD, as the engine's JSON gives a Date. */
export function dateSeconds(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / 1000;
}

/** The UTC day holding `ts` (Unix seconds) as YYYY-MM-DD, as a Date query parameter takes it. */
export function dateOf(ts: number): string {
  return new Date(dayStart(ts) * 1000).toISOString().slice(0, 10);
}

/** A decimal string (`-1.5`, `2`, `0.000001`; exponent notation from JS numbers too) as e18, truncated past 18 places. */
export function decimalE18(s: string | number): bigint {
  const text = typeof s === 'number' ? (/e/i.test(String(s)) ? s.toFixed(18) : String(s)) : s.trim();
  const m = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!m) throw new Error(`not a decimal number: ${text}`);
  const value = BigInt(m[2] || '0') * E18 + BigInt((m[3] ?? '').slice(0, 18).padEnd(18, '0') || '0');
  return m[1] ? -value : value;
}

/** Product of an e18 value and `raw / 10^decimals`, as e18 (one truncation). */
export function mulRaw(e18: bigint, raw: bigint, decimals: number): bigint {
  return (e18 * raw) / 10n ** BigInt(decimals);
}

/** e18 as a JS number, for output. */
export function fromE18(v: bigint): number {
  return toUnits(v, 18);
}

/** `a / b` of two exact values as a JS number (null when `b` is 0). */
export function ratio(a: bigint, b: bigint): number | null {
  return b === 0n ? null : fromE18((a * E18) / b);
}
