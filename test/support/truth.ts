/** Reads the views back and compares them with a scenario's ground truth. */
import { expect } from 'vitest';
import type { Store } from '../../store/client.ts';
import type { Truth } from './scenario.ts';

/**
 * The views' rows. The holder counts are sampled up to the current hour, so they are read
 * up to the start of the day of the chains' newest ingested blocks (every day before it is
 * settled), which keeps a snapshot independent of the clock; the later hours, the last count
 * carried forward, are summarised by their lowest and highest sample.
 */
export async function viewSnapshot(store: Store): Promise<Record<string, unknown[]>> {
  const db = store.database;
  const q = (sql: string) => store.query(sql);
  const [{ until }] = (await q(
    `SELECT toUInt32(toStartOfDay(min(block_time))) AS until FROM ${db}.chain_watermarks`,
  )) as { until: number }[];
  return {
    holderCountsUntil: [Number(until)],
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
      `SELECT vault, chain_id, toString(hour) AS hour_start, holders FROM ${db}.holder_counts_hourly
       WHERE hour < toDateTime(${until}, 'UTC') ORDER BY vault, chain_id, hour`,
    ),
    daily: await q(
      `SELECT vault, chain_id, toString(day) AS utc_day, start, end, min, max, count FROM ${db}.holder_history_daily
       WHERE day < toDate(toDateTime(${until}, 'UTC')) ORDER BY vault, chain_id, day`,
    ),
    hourlyLater: await q(
      `SELECT vault, chain_id, min(holders) AS lowest, max(holders) AS highest FROM ${db}.holder_counts_hourly
       WHERE hour >= toDateTime(${until}, 'UTC') GROUP BY vault, chain_id ORDER BY vault, chain_id`,
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
  expect(snap.holderCountsUntil, 'holder counts compared before').toEqual([truth.holderCountsUntil]);
  expect(
    new Map(snap.hourly.map((r) => [`${r.vault}|${r.chain_id}|${r.hour_start}`, Number(r.holders)])),
  ).toEqual(truth.hourlyHolders);
  const daily = snap.daily.map((r) => [
    `${r.vault}|${r.chain_id}|${r.utc_day}`,
    { start: +r.start, end: +r.end, min: +r.min, max: +r.max, count: +r.count },
  ]);
  expect(new Map(daily as [string, unknown][])).toEqual(truth.dailyHolders);
  // Every later hour (up to the current one) carries the count after the last transfer.
  const later = (n: number) => ({ lowest: n, highest: n });
  expect(
    new Map(
      snap.hourlyLater.map((r) => [`${r.vault}|${r.chain_id}`, { lowest: +r.lowest, highest: +r.highest }]),
    ),
  ).toEqual(new Map([...truth.finalHolders].map(([k, n]) => [k, later(n)])));
}
