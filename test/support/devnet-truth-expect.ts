/**
 * Soft comparisons of the API's numbers with the ground truth's: equal up to the float
 * conversion at output, every mismatch reported.
 */
import { expect } from 'vitest';
import { byKey, lc, units } from './devnet-truth-base.ts';

/**
 * Equal up to float conversion at output (relative 1e-9), never a looser tolerance.
 * Soft: the test goes on and reports every mismatch, which is what locates a bug.
 */
export function expectClose(actual: unknown, expected: number, what: string): void {
  const ok = typeof actual === 'number' && Math.abs(actual - expected) <= Math.abs(expected) * 1e-9;
  expect.soft(ok, `${what}: got ${actual}, expected ${expected}`).toBe(true);
}

/**
 * Same records in any order; the named number fields compared with the output
 * tolerance, the rest exactly. Soft, as `expectClose`.
 */
export function expectSameRecords<T extends object>(
  got: T[],
  want: T[],
  numbers: (keyof T)[],
  what: string,
): void {
  const strip = (r: T) =>
    Object.fromEntries(Object.entries(r).filter(([k]) => !numbers.includes(k as keyof T)));
  // Records alike but for their numbers (e.g. two requests of one user in one block) pair up
  // by those numbers, the same way on both sides.
  const order = (a: T, b: T) =>
    byKey(strip(a), strip(b)) || numbers.reduce((c, k) => c || (a[k] as number) - (b[k] as number), 0);
  const [g, w] = [[...got].sort(order), [...want].sort(order)];
  expect.soft(g.map(strip), what).toEqual(w.map(strip));
  if (g.length !== w.length) return;
  g.forEach((r, i) => {
    for (const k of numbers) expectClose(r[k], w[i][k] as number, `${what} #${i} ${String(k)}`);
  });
}

/** The top-100 rows are the largest (chain, user) balances, each equal to its truth balance. */
export function expectTopHolders(
  rows: { chainId: number; user: string; balance: number }[],
  balances: { chainId: number; user: string; raw: bigint }[],
  what: string,
): void {
  const truthOf = new Map(balances.map((b) => [`${b.chainId}|${b.user}`, b.raw]));
  expect(rows, `${what} rows`).toHaveLength(Math.min(100, balances.length));
  const listed = new Set<string>();
  for (const r of rows) {
    const key = `${r.chainId}|${lc(r.user)}`;
    const raw = truthOf.get(key);
    expect(raw, `${what}: unexpected holder ${key}`).toBeDefined();
    expectClose(r.balance, units(raw as bigint), `${what} ${key}`);
    listed.add(key);
  }
  const smallest = rows.length ? Math.min(...rows.map((r) => r.balance)) : 0;
  for (const [key, raw] of truthOf)
    if (!listed.has(key)) expect(units(raw), `${what}: ${key} left out`).toBeLessThanOrEqual(smallest);
}
