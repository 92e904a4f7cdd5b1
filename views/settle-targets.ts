/**
 * The settled tables (docs/architecture.md#precomputed-metrics): each with the query of the
 * views (or of the tables settled before it, for the head) that defines its rows, and the raw
 * inputs whose change makes a vault's rows dirty. views/settle.ts writes them in this order.
 */

import type { Store } from '../store/client.ts';
import { holderCountsSql, holderSinceSql, topHoldersSql } from './settle-holders.ts';

/** Activity kinds counted in `volume24h`: assets moved into or out of the vault. */
export const VOLUME_KINDS = ['DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM'] as const;

/**
 * What made a vault's rows dirty: a raw family ingested since the last settle, a new UTC day, a
 * new UTC hour (only the holder counts, sampled hourly, read it), or (head only) a vault
 * watermark that differs from the head's.
 */
export type Input =
  | 'rates'
  | 'transfers'
  | 'redemptions'
  | 'snapshots'
  | 'registry'
  | 'day'
  | 'hour'
  | 'activity'
  | 'watermarks';
/** The inputs of the daily metrics (every input but hour, activity and watermarks). */
const ALL: Input[] = ['rates', 'transfers', 'redemptions', 'snapshots', 'registry', 'day'];
/** The inputs of the composition views (composition_daily, composition_apy_daily). */
const COMPOSITION: Input[] = ['snapshots', 'registry', 'day'];

/**
 * A filter on `vault` (and `day` from each vault's first dirty day) for the vaults with one of
 * `inputs` dirty; null when there is none.
 */
export type Filter = (inputs: Input[], day?: string) => string | null;

/** Per vault with one of `inputs` dirty, its first dirty UTC day (YYYY-MM-DD). */
export type Froms = (inputs: Input[]) => Map<string, string>;

/** One settled table: its columns and the query of the views that produces its dirty rows. */
export interface Target {
  table: string;
  /** Key and value columns, in the table's order, without version and deleted. */
  columns: string[];
  /** The raw inputs its views read: the vaults to recompute are those with one of them dirty. */
  inputs: Input[];
  /** SELECT of `columns` (in order) for the rows `f(this.inputs)` selects. */
  select(db: string, f: Filter): string;
  /** Column holding the UTC day, when the table is daily. */
  day?: string;
  /**
   * The settle's query for the same rows when it is not `select`: from each dirty vault's first
   * dirty day on without reading its history before (views/settle-holders.ts).
   */
  incremental?(store: Store, from: Froms): string | Promise<string>;
}

export const TARGETS: Target[] = [
  {
    table: 'metrics_chain_daily',
    columns: ['vault', 'chain_id', 'day', 'price_e18', 'rolling7d', 'rolling30d', 'sec30d'],
    inputs: ['rates', 'registry', 'day'],
    select: (db, f) =>
      `SELECT vault, chain_id, day, price_e18, rolling7d, rolling30d, sec30d FROM ${db}.nav_apy_daily
       WHERE ${f(['rates', 'registry', 'day'], 'day')}`,
    day: 'day',
  },
  {
    table: 'metrics_vault_daily',
    columns: [
      'vault',
      'day',
      'price_day',
      'tvl_usd_e18',
      'tvl_30d_change_pct',
      'liquid_funds_usd_e18',
      'liquid_funds_range_pct',
      'composition_day',
      'composition_rolling7d',
      'composition_rolling30d',
      'composition_sec30d',
    ],
    inputs: ALL,
    // The union of the days of the three views, each view's columns where it has the day. The
    // composition views (most of a settle's time: their planning) are read only for the vaults
    // whose composition inputs changed; the others keep the stored compositionApy.
    select: (db, f) => {
      const all = f(ALL, 'day') as string;
      const comp = f(COMPOSITION, 'day');
      const kept = comp ? `(${all}) AND NOT (${comp})` : all;
      return `SELECT vault, day, max(price_day) AS price_day,
        sum(tvl) AS tvl_usd_e18, sum(change) AS tvl_30d_change_pct, sum(liquid) AS liquid_funds_usd_e18,
        sum(range) AS liquid_funds_range_pct, max(comp_day) AS composition_day,
        anyIf(r7, comp_day = 1) AS composition_rolling7d, anyIf(r30, comp_day = 1) AS composition_rolling30d,
        anyIf(sec, comp_day = 1) AS composition_sec30d
      FROM (
        SELECT vault, day, toUInt8(1) AS price_day, toInt256(0) AS tvl, 0 AS change, toInt256(0) AS liquid, 0 AS range,
          toUInt8(0) AS comp_day, CAST(NULL, 'Nullable(Float64)') AS r7, CAST(NULL, 'Nullable(Float64)') AS r30,
          CAST(NULL, 'Nullable(Float64)') AS sec
        FROM ${db}.vault_price_daily WHERE ${all}
        UNION ALL
        SELECT vault, day, 0, tvl_usd_e18, tvl_30d_change_pct, liquid_funds_usd_e18, liquid_funds_range_pct, 0, NULL, NULL, NULL
        FROM ${db}.vault_liquidity_daily WHERE ${all}
        UNION ALL
        SELECT toString(vault), day, 0, toInt256(0), 0, toInt256(0), 0, 1, composition_rolling7d,
          composition_rolling30d, composition_sec30d
        FROM ${db}.metrics_vault_daily FINAL WHERE composition_day = 1 AND ${kept}
        ${
          comp
            ? `UNION ALL
        SELECT vault, day, 0, toInt256(0), 0, toInt256(0), 0, 1, rolling7d, rolling30d, sec30d
        FROM ${db}.composition_apy_daily WHERE ${comp}`
            : ''
        }
      ) GROUP BY vault, day`;
    },
    day: 'day',
  },
  {
    table: 'metrics_assets_daily',
    columns: ['vault', 'day', 'position', 'slug', 'usd_price_e18', 'apy7d_e18', 'apy30d_e18', 'weight_e18'],
    inputs: COMPOSITION,
    select: (db, f) =>
      `SELECT vault, day, position, slug, usd_price_e18, apy7d_e18, apy30d_e18, weight_e18 FROM ${db}.composition_daily
       WHERE ${f(COMPOSITION, 'day')}`,
    day: 'day',
  },
  {
    table: 'metrics_vault_current',
    columns: ['vault', 'has_price', 'chain_id', 'rate_raw', 'rate_decimals', 'updated_at', 'holders'],
    inputs: ['rates', 'transfers', 'registry'],
    select: (db, f) => {
      const w = f(['rates', 'transfers', 'registry']);
      return `SELECT vault, max(has_price) AS has_price, max(chain_id) AS chain_id, max(rate_raw) AS rate_raw,
        max(rate_decimals) AS rate_decimals, max(updated_at) AS updated_at, max(holders) AS holders
      FROM (
        SELECT vault, toUInt8(1) AS has_price, chain_id, rate_raw, rate_decimals, updated_at, toUInt64(0) AS holders
        FROM ${db}.vault_price_current WHERE ${w}
        UNION ALL
        SELECT toString(vault), 0, 0, toUInt256(0), 0, toDateTime(0, 'UTC'), holders FROM ${db}.vault_holders WHERE ${w}
      ) GROUP BY vault`;
    },
  },
  {
    table: 'metrics_holders_daily',
    columns: ['vault', 'chain_id', 'day', 'start', 'end', 'min', 'max', 'average', 'count'],
    inputs: ['transfers', 'day', 'hour'],
    select: (db, f) =>
      `SELECT vault, chain_id, day, start, end, min, max, average, count FROM ${db}.holder_history_daily
       WHERE ${f(['transfers', 'day', 'hour'], 'day')}`,
    day: 'day',
    incremental: (store, from) => holderCountsSql(store.database, from(['transfers', 'day', 'hour'])),
  },
  {
    // Before metrics_top_holders, which reads it. The "day" of a row is that of its holderSince:
    // a change from day D on rewrites the holders whose holderSince is from D on or moves there.
    table: 'metrics_holder_since',
    columns: ['vault', 'chain_id', 'holder', 'since'],
    inputs: ['transfers'],
    select: (db, f) =>
      `SELECT vault, chain_id, holder, since FROM ${db}.holder_since WHERE ${f(['transfers'], 'toDate(since)')}`,
    day: 'toDate(since)',
    incremental: (store, from) => holderSinceSql(store, from(['transfers'])),
  },
  {
    // Not the rates: holder_values joins vault_share_usd_current, which has a row for every
    // registered vault with or without a rate, and the ranked balances do not use its value.
    table: 'metrics_top_holders',
    columns: ['vault', 'chain_id', 'holder', 'balance_raw', 'share_decimals', 'balance_e36', 'since'],
    inputs: ['transfers', 'registry'],
    select: (db, f) =>
      `SELECT vault, chain_id, holder, balance_raw, share_decimals, balance_e36, since FROM ${db}.vault_top_holders
       WHERE ${f(['transfers', 'registry'])}`,
    incremental: (store, from) => topHoldersSql(store.database, [...from(['transfers', 'registry']).keys()]),
  },
  {
    table: 'metrics_pending_redemptions',
    columns: [
      'vault',
      'chain_id',
      'queue',
      'request_id',
      'deadline',
      'shares_raw',
      'share_decimals',
      'share_usd_e18',
    ],
    inputs: ['redemptions', 'rates', 'registry'],
    select: (db, f) =>
      `SELECT vault, chain_id, queue, request_id, deadline, shares_raw, share_decimals, share_usd_e18
       FROM ${db}.pending_redemptions WHERE ${f(['redemptions', 'rates', 'registry'])}`,
  },
  {
    // volume24h's inputs: per second and asset decimals, the assets of the volume kinds.
    table: 'metrics_volume',
    columns: ['vault', 'block_time', 'assets_decimals', 'assets'],
    inputs: ['activity'],
    select: (db, f) =>
      `SELECT toString(vault) AS vault, block_time, assets_decimals, sum(assets) AS assets FROM ${db}.transactions
       WHERE kind IN (${VOLUME_KINDS.map((k) => `'${k}'`).join(', ')}) AND ${f(['activity'], 'toDate(block_time)')}
       GROUP BY vault, block_time, assets_decimals`,
    day: 'toDate(block_time)',
  },
  {
    // Last: it reads the tables above as this settle left them. The day is the settle clock's
    // today; a new day makes every vault dirty, so each row is rewritten on its day.
    table: 'metrics_vault_head',
    columns: [
      'vault',
      'day',
      'status',
      'vault_address',
      'name',
      'symbol',
      'decimals',
      'chain_ids',
      'solana_mint',
      'base_asset_usd_price',
      'base_asset_decimals',
      'info',
      'watermark',
      'first_day',
      'has_price',
      'chain_id',
      'rate_raw',
      'rate_decimals',
      'updated_at',
      'holders',
      'tvl_usd_e18',
      'tvl_30d_change_pct',
      'liquid_funds_usd_e18',
      'liquid_funds_range_pct',
      'nav_rolling7d',
      'nav_rolling30d',
      'nav_sec30d',
    ],
    inputs: [...ALL, 'watermarks'],
    select: (db, f) => {
      const w = f([...ALL, 'watermarks']) as string;
      return `SELECT r.vault AS vault, today() AS day, r.status AS status, r.vault_address AS vault_address,
        r.name AS name, r.symbol AS symbol, r.decimals AS decimals, r.chain_ids AS chain_ids,
        r.solana_mint AS solana_mint, r.base_asset_usd_price AS base_asset_usd_price,
        r.base_asset_decimals AS base_asset_decimals, r.info AS info, s.watermark AS watermark,
        if(fd.vault = '', NULL, fd.first) AS first_day, c.has_price AS has_price, c.chain_id AS chain_id,
        c.rate_raw AS rate_raw, c.rate_decimals AS rate_decimals, c.updated_at AS updated_at, c.holders AS holders,
        d.tvl_usd_e18 AS tvl_usd_e18, d.tvl_30d_change_pct AS tvl_30d_change_pct,
        d.liquid_funds_usd_e18 AS liquid_funds_usd_e18, d.liquid_funds_range_pct AS liquid_funds_range_pct,
        n.rolling7d AS nav_rolling7d, n.rolling30d AS nav_rolling30d, n.sec30d AS nav_sec30d
      FROM (SELECT slug AS vault, * EXCEPT slug FROM ${db}.vault_registry) AS r
      LEFT JOIN ${db}.vault_settlement AS s ON s.vault = r.vault
      LEFT JOIN (
        SELECT toString(vault) AS vault, min(day) AS first FROM ${db}.metrics_vault_daily FINAL
        WHERE price_day = 1 AND day <= today() GROUP BY vault
      ) AS fd ON fd.vault = r.vault
      LEFT JOIN (SELECT * FROM ${db}.metrics_vault_current FINAL) AS c ON c.vault = r.vault
      LEFT JOIN (SELECT * FROM ${db}.metrics_vault_daily FINAL WHERE day = today()) AS d ON d.vault = r.vault
      LEFT JOIN (
        SELECT * FROM ${db}.metrics_chain_daily FINAL
        WHERE (vault, day) IN (SELECT vault, last_settled_day FROM ${db}.vault_settlement)
      ) AS n ON n.vault = r.vault AND n.chain_id = c.chain_id
      WHERE ${w.replaceAll('vault IN', 'r.vault IN')}`;
    },
  },
];
