/**
 * How a field's value becomes its raw-table column. EVM addresses and hashes are
 * lower-cased (Solana base58 is case-sensitive and kept as is), so the same account
 * always has the same key. The transcoder (streams/transcode.ts) writes the same text
 * on bytes for the conversions it supports.
 */

/** A column conversion, by name (the transcoder switches on it). */
export type Out = 'norm' | 'time' | 'iso' | 'flag' | 'orNull' | 'base64';

// Only EVM hex is case-insensitive; charCode checks avoid a string allocation per field.
const UPPER_HEX = /[A-F]/;
export const norm = (s: string) =>
  s.charCodeAt(0) === 48 && s.charCodeAt(1) === 120 && UPPER_HEX.test(s) ? s.toLowerCase() : s;

const DATETIME_MAX = 4_294_967_295;
/**
 * Unix seconds for a `DateTime` column in TabSeparated. The store parses dates with
 * `best_effort`, which reads a short number as something else entirely ("1" as a date in
 * the current year, "0" and "86400" not at all): ten zero-padded digits are always read as
 * Unix seconds. Values past the type's end (a uint64 "no deadline") are its last second.
 */
export function unixTime(seconds: number): string | number {
  if (seconds >= 1_000_000_000) return Math.min(seconds, DATETIME_MAX);
  return String(Math.max(0, seconds)).padStart(10, '0');
}

export const OUT: Record<Out, (v: never) => unknown> = {
  norm,
  time: unixTime,
  iso: (ms: number) => new Date(ms).toISOString(),
  flag: (b: boolean) => (b ? 1 : 0),
  orNull: (s: string) => (s === '' ? null : s),
  base64: (b: Buffer) => b.toString('base64'),
};

/** Natural identity of a chain event: `chainId:blockHash:logIndex`, the hash as stored. */
export function eventId(r: { chainId: number; blockHash: string; logIndex: number }): string {
  return `${r.chainId}:${norm(r.blockHash)}:${r.logIndex}`;
}

/** Scales a decimal string to an integer of 10^-scale units, exactly (truncating extra digits). */
export function scaleDecimal(s: string, scale: number): bigint {
  const neg = s.startsWith('-');
  const [int, frac = ''] = (neg ? s.slice(1) : s).split('.');
  const v = BigInt(int + frac.padEnd(scale, '0').slice(0, scale));
  return neg ? -v : v;
}

/** Exact USD value of `amount` raw units at `usdPrice`, in 1e-18 USD. */
export function usdE18(amount: string, decimals: number, usdPrice: string): bigint {
  return (BigInt(amount) * scaleDecimal(usdPrice, 18)) / 10n ** BigInt(decimals);
}
