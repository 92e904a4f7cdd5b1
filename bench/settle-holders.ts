/**
 * The settle's cost per changed vault for the holder tables, part of bench/views.ts:
 * on a settled store, one vault changes and the settle runs (views/settle.ts); its per-table
 * times are read from the settle's result. Two changes: a transfer of today (a live chain), and
 * the retraction of a transfer 10 days back (a reorg of an older range; its insertion is settled
 * first, untimed). For each, also the time of the same vault's rows recomputed from the views
 * over the whole history (holder_history_daily from the changed day, vault_top_holders), as the
 * settle did before migration 026: each query forced to compute every column (a hash of each row).
 * vault_top_holders is today's definition (vault_top_balances with holder_since), which gives the
 * same rows as the one the settle read before and took about half its time in a side-by-side run,
 * so this understates what the settle cost before.
 */
import type { Store } from '../store/client.ts';
import { settleMetrics } from '../views/settle.ts';

/** The holder tables whose settle time is reported. */
const HOLDER_TABLES = ['metrics_holders_daily', 'metrics_holder_since', 'metrics_top_holders'] as const;

export interface HolderTick {
  /** The whole settle, ms. */
  settleMs: number;
  /** Per holder table, ms (the settle's own timing). */
  tables: Record<string, number>;
  /** The same vault's holder counts and top holders from the views over the whole history, ms. */
  fromViews: { holders_daily: number; top_holders: number };
}

let block = 0;

/** A transfer of `vault` on the primary chain at `time` to a new address (a new holder). */
function transferSql(db: string, vault: string, time: number, removed: 0 | 1, n: number): string {
  const b = 8_000_000_000 + n;
  const to = `0x${'f'.repeat(30)}${String(n).padStart(10, '0')}`;
  return `INSERT INTO ${db}.transfers_raw (event_id, chain_id, block_number, block_hash, block_time, tx_hash, log_index,
      removed, ver, vault, token, from_address, to_address, amount)
    VALUES ('98866:0xh${b}:0', 98866, ${b}, '0xh${b}', toDateTime(${time}, 'UTC'), '0xh${b}', 0, ${removed},
      ${1 + removed}, '${vault}', '0x7a', '0x0000000000000000000000000000000000000000', '${to}', 5000000)`;
}

async function fromViews(store: Store, vault: string, day: string): Promise<HolderTick['fromViews']> {
  const db = store.database;
  const time = async (select: string) => {
    const t0 = performance.now();
    await store.query(`SELECT count() AS n, sum(cityHash64(*)) AS h FROM (${select})`);
    return performance.now() - t0;
  };
  return {
    holders_daily: await time(
      `SELECT * FROM ${db}.holder_history_daily WHERE vault = '${vault}' AND day >= toDate('${day}')`,
    ),
    top_holders: await time(`SELECT * FROM ${db}.vault_top_holders WHERE vault = '${vault}'`),
  };
}

async function tick(store: Store, vault: string, day: string): Promise<HolderTick> {
  const t0 = performance.now();
  const r = await settleMetrics(store);
  const settleMs = performance.now() - t0;
  const tables = Object.fromEntries(HOLDER_TABLES.map((t) => [t, r.ms[t] ?? 0]));
  return { settleMs, tables, fromViews: await fromViews(store, vault, day) };
}

/** Both changes on `vault` of a settled store, at the clock `now` (unix seconds). */
export async function measureHolderTicks(
  store: Store,
  vault: string,
  now: number,
): Promise<{ today: HolderTick; retracted10d: HolderTick }> {
  const db = store.database;
  const day = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
  await store.command(transferSql(db, vault, now - 30, 0, ++block));
  const today = await tick(store, vault, day(now));
  const old = now - 10 * 86_400;
  const n = ++block;
  await store.command(transferSql(db, vault, old, 0, n));
  await settleMetrics(store);
  await store.command(transferSql(db, vault, old, 1, n));
  const retracted10d = await tick(store, vault, day(old));
  return { today, retracted10d };
}
