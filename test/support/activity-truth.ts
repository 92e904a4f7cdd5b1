/**
 * Expected values of the activity scenario, computed from its events alone: the
 * canonical records, balances, and the JSON number the API prints for a raw amount.
 */
import type { ActivityScenario } from './activity-model.ts';
import { EVM_ZERO, SOLANA_ZERO } from './events.ts';

/** The records still on the canonical chain: each retracted event and its retraction dropped. */
export function canonical<
  T extends { chainId: number; blockHash: string; logIndex: number; removed: boolean },
>(list: T[]): T[] {
  const id = (r: T) => `${r.chainId}:${r.blockHash}:${r.logIndex}`;
  const gone = new Set(list.filter((r) => r.removed).map(id));
  return list.filter((r) => !gone.has(id(r)));
}

/** Raw balance per `${vault}|${chainId}|${holder}` from the canonical transfers at or before `until`. */
export function balancesAt(s: ActivityScenario, until = Number.POSITIVE_INFINITY): Map<string, bigint> {
  const out = new Map<string, bigint>();
  const add = (k: string, d: bigint) => out.set(k, (out.get(k) ?? 0n) + d);
  for (const t of canonical(s.transfers)) {
    if (t.blockTimestamp > until) continue;
    if (t.from !== EVM_ZERO && t.from !== SOLANA_ZERO)
      add(`${t.vault}|${t.chainId}|${t.from}`, -BigInt(t.amount));
    if (t.to !== EVM_ZERO && t.to !== SOLANA_ZERO) add(`${t.vault}|${t.chainId}|${t.to}`, BigInt(t.amount));
  }
  return out;
}

/** `raw / 10^decimals` as the JSON number the API must print (decimal string → Number). */
export function units(raw: bigint, decimals: number): number {
  const neg = raw < 0n;
  const s = (neg ? -raw : raw).toString().padStart(decimals + 1, '0');
  const n = Number(decimals ? `${s.slice(0, s.length - decimals)}.${s.slice(s.length - decimals)}` : s);
  return neg ? -n : n;
}
