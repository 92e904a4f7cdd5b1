/** Reads the views back and compares them with a scenario's ground truth. */
import { expect } from 'vitest';
import type { Store } from '../../store/client.ts';
import type { Truth } from './scenario.ts';

export async function viewSnapshot(store: Store): Promise<Record<string, unknown[]>> {
  const db = store.database;
  const q = (sql: string) => store.query(sql);
  return {
    balances: await q(
      `SELECT vault, chain_id, holder, toString(balance_raw) AS b FROM ${db}.balances ORDER BY vault, chain_id, holder`,
    ),
    holders: await q(`SELECT vault, holders FROM ${db}.vault_holders ORDER BY vault`),
    supply: await q(
      `SELECT vault, chain_id, day, toString(supply_raw) AS s FROM ${db}.supply_daily ORDER BY vault, chain_id, day`,
    ),
    prices: await q(
      `SELECT vault, chain_id, toString(day) AS day, toString(close_rate) AS r FROM ${db}.price_daily ORDER BY vault, chain_id, day`,
    ),
    fees: await q(
      `SELECT vault, toString(day) AS day, kind, toString(usd_e18) AS usd FROM ${db}.fees_daily ORDER BY vault, day, kind`,
    ),
    roles: await q(
      `SELECT vault, chain_id, user, role, enabled FROM ${db}.role_assignments ORDER BY vault, chain_id, user, role`,
    ),
    hourly: await q(
      `SELECT vault, chain_id, hour, holders FROM ${db}.holder_counts_hourly ORDER BY vault, chain_id, hour`,
    ),
    daily: await q(
      `SELECT vault, chain_id, day, start, end, min, max, count FROM ${db}.holder_counts_daily ORDER BY vault, chain_id, day`,
    ),
    deadLetters: await q(
      `SELECT topic, offset, reason FROM ${db}.dead_letters FINAL ORDER BY topic, toUInt64OrZero(offset)`,
    ),
  };
}

export function expectMatchesTruth(snap: Record<string, any[]>, truth: Truth): void {
  const balances = new Map(snap.balances.map((r) => [`${r.vault}|${r.chain_id}|${r.holder}`, BigInt(r.b)]));
  expect(balances).toEqual(truth.balances);
  expect(new Map(snap.holders.map((r) => [r.vault, Number(r.holders)]))).toEqual(truth.holders);
  const lastSupply = new Map<string, bigint>();
  for (const r of snap.supply) lastSupply.set(`${r.vault}|${r.chain_id}`, BigInt(r.s));
  expect(lastSupply).toEqual(truth.supply);
  const prices = new Map(snap.prices.map((r) => [`${r.vault}|${r.chain_id}|${r.day}`, BigInt(r.r)]));
  for (const [k, v] of truth.closes) expect(prices.get(k), k).toBe(v);
  const fees = new Map(snap.fees.map((r) => [`${r.vault}|${r.day}|${r.kind}`, BigInt(r.usd)]));
  expect(new Map([...fees].filter(([, v]) => v !== 0n))).toEqual(
    new Map([...truth.fees].filter(([, v]) => v !== 0n)),
  );
  const roles = new Map(
    snap.roles.map((r) => [`${r.vault}|${r.chain_id}|${r.user}|${r.role}`, Number(r.enabled) === 1]),
  );
  expect(roles).toEqual(truth.roles);
}
