/**
 * Raw rows for the settle suites (views-settle*, views-transactions): a registry entry of a
 * test vault on the primary chain, and events with a block number unique across the process
 * (rates, mints, snapshots), written straight into the raw tables; and the check that the
 * settled tables equal the views that define them.
 */
import { expect } from 'vitest';
import { vaultSchema } from '../../core/settings/registry.ts';
import type { Store } from '../../store/client.ts';
import { settleSql, TARGETS } from '../../views/settle-targets.ts';

export const USDC = '0x00000000000000000000000000000000c0ffee01';

export function registry(slug: string, chainIds: number[], updatedAt: string) {
  const info = vaultSchema.parse({
    slug,
    name: slug,
    symbol: slug.toUpperCase(),
    decimals: 6,
    vaultAddress: `0x${'7a'.repeat(19)}${slug === 'sa' ? '01' : '02'}`,
    accountantAddress: `0x${'ac'.repeat(19)}${slug === 'sa' ? '01' : '02'}`,
    chainIds,
    chain: {
      primary: { startBlock: 0, accountantType: 'hub' },
      mainnet: { startBlock: 0, accountantType: 'spoke' },
    },
    liquidAssets: [{ contractAddress: USDC, symbol: 'USDC', decimals: 6, chainId: 98866 }],
    targetComposition: [{ slug: 'tbill', name: 'T-Bill', description: 'Treasury bills', image: '' }],
  });
  return {
    slug,
    status: 'active',
    updated_at: updatedAt,
    vault_address: info.vaultAddress,
    name: info.name,
    symbol: info.symbol,
    decimals: 6,
    chain_ids: chainIds,
    solana_mint: '',
    base_asset_usd_price: '1',
    base_asset_decimals: 6,
    info: JSON.stringify(info),
  };
}

let block = 1;
export const ev = (vault: string, chain: number, t: number, removed = 0, id?: string) => {
  const n = block++;
  return {
    event_id: id ?? `${chain}:0x${n.toString(16)}:0`,
    chain_id: chain,
    block_number: n,
    block_hash: `0x${n.toString(16)}`,
    block_time: t,
    tx_hash: `0x${n.toString(16)}`,
    log_index: 0,
    removed,
    ver: n,
    vault,
  };
};
export const rate = (vault: string, chain: number, t: number, r: number, removed = 0, id?: string) => ({
  ...ev(vault, chain, t, removed, id),
  accountant: '0xacc',
  rate: String(r),
  rate_decimals: 6,
  source: 'EVENT',
  is_paused: 0,
});
export const mint = (vault: string, chain: number, t: number, to: string, amount: number) => ({
  ...ev(vault, chain, t),
  token: `0x${'7a'.repeat(20)}`,
  from_address: '0x0000000000000000000000000000000000000000',
  to_address: to,
  amount: String(amount),
});
export const snapshot = (
  vault: string,
  t: number,
  kind: string,
  token: string,
  amount: number,
  extra = {},
) => ({
  vault,
  chain_id: 98866,
  block_number: t,
  ts: t,
  kind,
  token,
  amount: String(amount),
  decimals: 6,
  usd_price: '1',
  is_paused: 0,
  ...extra,
});

/**
 * What each settled table must equal once settled, over every vault and day: a query with the
 * table's columns (all but version and deleted, read from the engine) and its parameters. The
 * holder tables and metrics_vault_daily against the views that define them (the settle computes
 * them from the first changed day on, or over two writes); the others by their own file
 * (views/settle/<table>.sql) for every vault from 1970-01-01, so the check is that the settle's
 * choice of vaults and days recomputed what a settle of everything would.
 */
export async function settledTables(
  store: Store,
): Promise<{ table: string; columns: string[]; select: string; params: Record<string, unknown> }[]> {
  const db = store.database;
  const [{ vaults }] = await store.query<{ vaults: string[] }>(
    `SELECT groupUniqArray(v) AS vaults FROM (
       SELECT toString(vault) AS v FROM ${db}.rates_raw UNION ALL SELECT toString(vault) FROM ${db}.transfers_raw
       UNION ALL SELECT toString(vault) FROM ${db}.snapshots_raw UNION ALL SELECT toString(vault) FROM ${db}.redemptions_raw
       UNION ALL SELECT toString(vault) FROM ${db}.activity_raw UNION ALL SELECT toString(slug) FROM ${db}.registry_raw
     )`,
  );
  const params = { vaults, froms: vaults.map(() => '1970-01-01') };
  const fromViews: Record<string, string> = {
    metrics_holders_daily: `SELECT * FROM ${db}.holder_history_daily`,
    metrics_holder_since: `SELECT * FROM ${db}.holder_since`,
    metrics_top_holders: `SELECT * FROM ${db}.vault_top_holders`,
    metrics_vault_daily: `SELECT vault, day, max(price_day) AS price_day, sum(tvl) AS tvl_usd_e18,
        sum(change) AS tvl_30d_change_pct, sum(liquid) AS liquid_funds_usd_e18, sum(range) AS liquid_funds_range_pct,
        max(comp_day) AS composition_day, anyIf(r7, comp_day = 1) AS composition_rolling7d,
        anyIf(r30, comp_day = 1) AS composition_rolling30d, anyIf(sec, comp_day = 1) AS composition_sec30d
      FROM (
        SELECT vault, day, toUInt8(1) AS price_day, toInt256(0) AS tvl, 0 AS change, toInt256(0) AS liquid, 0 AS range,
          toUInt8(0) AS comp_day, CAST(NULL, 'Nullable(Float64)') AS r7, CAST(NULL, 'Nullable(Float64)') AS r30,
          CAST(NULL, 'Nullable(Float64)') AS sec
        FROM ${db}.vault_price_daily
        UNION ALL
        SELECT vault, day, 0, tvl_usd_e18, tvl_30d_change_pct, liquid_funds_usd_e18, liquid_funds_range_pct, 0, NULL, NULL, NULL
        FROM ${db}.vault_liquidity_daily
        UNION ALL
        SELECT vault, day, 0, toInt256(0), 0, toInt256(0), 0, 1, rolling7d, rolling30d, sec30d FROM ${db}.composition_apy_daily
      ) GROUP BY vault, day`,
  };
  const out = [];
  for (const table of new Set(TARGETS.map((t) => t.table))) {
    const columns = (
      await store.query<{ name: string }>(
        `SELECT name FROM system.columns WHERE database = {db:String} AND table = {table:String}
         AND name NOT IN ('version', 'deleted') ORDER BY position`,
        { db, table },
      )
    ).map((c) => c.name);
    out.push({ table, columns, select: fromViews[table] ?? settleSql(table, db), params });
  }
  return out;
}

/** Each settled table equals its views (settledTables); returns the tables' rows, to see that a change moved them. */
export async function expectSettledEqualsViews(store: Store, only?: readonly string[]): Promise<string> {
  let all = '';
  for (const t of await settledTables(store)) {
    if (only && !only.includes(t.table)) continue;
    const cols = t.columns.map((c) => `toString(\`${c}\`)`).join(', ');
    const q = (from: string) => `SELECT arrayStringConcat([${cols}], '|') AS r FROM ${from} ORDER BY r`;
    const fromViews = (await store.query<{ r: string }>(q(`(${t.select})`), t.params)).map((x) => x.r);
    const fromTable = (await store.query<{ r: string }>(q(`${store.database}.${t.table} FINAL`))).map(
      (x) => x.r,
    );
    expect(fromTable, t.table).toEqual(fromViews);
    all += fromTable.join('\n');
  }
  return all;
}
