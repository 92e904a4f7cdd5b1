/**
 * The vault metrics and histories, read for a set of vaults up to `now` (the API clock, so
 * time-relative answers are testable) from the metrics tables that views/settle.ts writes from
 * the plain views: per UTC day the close price and navApy of every chain (`metrics_chain_daily`
 * from `nav_apy_daily`), the TVL and its 30-day change, the liquid funds, liquidFundsRange and
 * compositionApy (`metrics_vault_daily` from `vault_price_daily`, `vault_liquidity_daily` and
 * `composition_apy_daily`), the composition items (`metrics_assets_daily` from
 * `composition_daily`); plus, when asked, today's liquid-asset prices (`liquid_funds_asset_daily`),
 * which only the details' `liveLiquidity=true` path values live balances at. The API only looks values up and
 * shapes them: no metric is computed here.
 */
import type { Store } from '../../store/client.ts';
import type { ApyBlock } from './history-types.ts';
import { SHORT_READ } from './short-read.ts';
import { type DailyAsset, type LiquidPrices, liquidKey } from './vault-composition.ts';
import { dateOf, dateSeconds, dayStart } from './vault-numbers.ts';

/** One (chain, UTC day) of `nav_apy_daily`: the close price (e18) and navApy. */
export interface DailyNav {
  /** 0 when not read (the APYs alone, SeriesDays.values false). */
  priceE18: bigint;
  navApy: ApyBlock;
}

/** One yield asset on one day (`composition_daily`), exact e18 values. */
/** One UTC day of a vault from the views; absent members are 0 / empty there. */
export interface VaultDay {
  tvlE18: bigint;
  /** tvl30DayChange, percent. */
  tvl30DayChange: number;
  liquidE18: bigint;
  /** liquidFundsRange, percent (`vault_liquidity_daily`). */
  liquidRange: number;
  compositionApy: ApyBlock;
  assets: DailyAsset[];
}

export interface VaultSeries {
  /** chainId -> day start (Unix seconds) -> close and navApy; days from the chain's first rate on. */
  nav: Map<number, Map<number, DailyNav>>;
  /** Day start -> the vault's numbers of that day (days of its price chain, up to today). */
  days: Map<number, VaultDay>;
  /** First day (start, Unix seconds) of the vault's price history (its price chain's first close). */
  firstDay: number | undefined;
  /** Oldest watermark (Unix seconds) among the vault's chains, 0 when one has none (set by loadContexts). */
  watermark: number;
  /** Today's USD price of each configured liquid asset (only when asked: liveLiquidity=true). */
  liquidPrices: LiquidPrices;
}

/** Series of a vault without data. */
export const emptySeries = (): VaultSeries => ({
  nav: new Map(),
  days: new Map(),
  firstDay: undefined,
  watermark: 0,
  liquidPrices: new Map(),
});

const NO_APY: ApyBlock = { rolling7d: null, rolling30d: null, sec30d: null };

/** The VaultDay of `day`, created empty when absent. */
function dayOf(s: VaultSeries, day: number): VaultDay {
  let d = s.days.get(day);
  if (!d) {
    d = {
      tvlE18: 0n,
      tvl30DayChange: 0,
      liquidE18: 0n,
      liquidRange: 0,
      compositionApy: NO_APY,
      assets: [],
    };
    s.days.set(day, d);
  }
  return d;
}

const num = (v: number | string | null) => (v === null ? null : Number(v));
const big = (v: string | null) => (v === null ? null : BigInt(v));

const seriesOf = (m: Map<string, VaultSeries>, vault: string): VaultSeries => {
  let s = m.get(vault);
  if (!s) {
    s = emptySeries();
    m.set(vault, s);
  }
  return s;
};

/** Which days of the series to read (Unix day starts); every day up to today when both are absent. */
export interface SeriesDays {
  /** First and last day of a range (either may be absent). */
  from?: number;
  to?: number;
  /** Exactly these days. */
  only?: number[];
  /** The composition items of each day (performance-history with includeCompositeAssets). */
  assets?: boolean;
  /** Today's liquid-asset prices (details with liveLiquidity=true). */
  liquidPrices?: boolean;
  /** The first price day of each vault when already known (the head's): not read again. */
  firstDays?: Map<string, number | undefined>;
  /** Only these chains' closes and navApy (default: every chain's). */
  chains?: number[];
  /**
   * false: the APYs alone (apy-history), not the closes, TVL and liquid funds, which stay 0 (fewer
   * columns read, a cheaper statement); needs `firstDays`. Default true.
   */
  values?: boolean;
}

/**
 * The series of every vault in `slugs` (a vault without data gets empty series), over `days`,
 * from the metrics tables (views/settle.ts writes them from the views): a few short reads of
 * rows keyed by (vault, day), whatever the length of the history.
 */
export async function loadVaultSeries(
  store: Store,
  slugs: readonly string[],
  now: number,
  days: SeriesDays = {},
): Promise<Map<string, VaultSeries>> {
  const db = store.database;
  // The days as Dates (YYYY-MM-DD): the filters compare the key column with parameters, no
  // function per row or per statement (each costs the statement time).
  const today = dayStart(now);
  const params = {
    slugs,
    fromDay: dateOf(days.from ?? 0),
    toDay: dateOf(Math.min(today, days.to ?? now)),
    only: (days.only ?? []).filter((d) => d <= today).map(dateOf),
    chains: days.chains ?? [],
    today: dateOf(today),
  };
  const inDays = days.only ? 'day IN {only:Array(Date)}' : 'day >= {fromDay:Date} AND day <= {toDay:Date}';
  const where = `vault IN {slugs:Array(String)} AND ${inDays}`;
  const values = days.values !== false;
  if (!values && !days.firstDays) throw new Error('the APYs alone are read with the first days known');
  // One statement: the closes and navApy (kind 'nav'), the vault's days (kind 'day') and, unless
  // the caller knows it, its first price day whatever the range (kind 'first'); columns as
  // stored (big integers come back as strings, days as YYYY-MM-DD).
  const rows = await store.query<{
    kind: 'nav' | 'day' | 'first';
    vault: string;
    chain_id: number;
    day: string;
    /** With values. nav: the close (e18); day: the TVL (e18). */
    a?: string;
    /** With values. day: the liquid funds (e18). */
    b?: string;
    price_day?: number;
    change?: number;
    range?: number;
    comp_day: number;
    r7: number | null;
    r30: number | null;
    sec: number | null;
  }>(
    `SELECT 'nav' AS kind, toString(vault) AS vault, chain_id, day, ${
      values
        ? `price_e18 AS a, toInt256(0) AS b, toUInt8(0) AS price_day, toFloat64(0) AS change, toFloat64(0) AS range,`
        : ''
    } toUInt8(0) AS comp_day, rolling7d AS r7, rolling30d AS r30, sec30d AS sec
     FROM ${db}.metrics_chain_daily FINAL
     WHERE ${where}${days.chains ? ' AND chain_id IN {chains:Array(UInt32)}' : ''}
     UNION ALL
     SELECT 'day', toString(vault), 0, day, ${
       values
         ? 'tvl_usd_e18, liquid_funds_usd_e18, price_day, tvl_30d_change_pct, liquid_funds_range_pct,'
         : ''
     } composition_day, composition_rolling7d, composition_rolling30d, composition_sec30d
     FROM ${db}.metrics_vault_daily FINAL WHERE ${where}${
       days.firstDays
         ? ''
         : `
     UNION ALL
     SELECT 'first', toString(vault), 0, min(day), 0, 0, 1, 0, 0, 0, NULL, NULL, NULL
     FROM ${db}.metrics_vault_daily FINAL
     WHERE vault IN {slugs:Array(String)} AND price_day = 1 AND day <= {today:Date} GROUP BY vault`
     } ${SHORT_READ}`,
    params,
  );
  const nav = rows.filter((r) => r.kind === 'nav');
  const vaultDays = rows.filter((r) => r.kind === 'day');
  const firsts = rows.filter((r) => r.kind === 'first');
  const assets = days.assets
    ? await store.query<{
        vault: string;
        day: string;
        slug: string;
        price: string;
        apy7d: string | null;
        apy30d: string | null;
        weight: string | null;
      }>(
        `SELECT toString(vault) AS vault, day, slug, usd_price_e18 AS price, apy7d_e18 AS apy7d,
           apy30d_e18 AS apy30d, weight_e18 AS weight
         FROM ${db}.metrics_assets_daily FINAL WHERE ${where}
         ORDER BY vault, day, position ${SHORT_READ}`,
        params,
      )
    : [];
  const prices = days.liquidPrices
    ? await store.query<{ vault: string; chain_id: number; contract_address: string; price: string }>(
        `SELECT vault, chain_id, contract_address, toString(usd_price_e18) AS price
         FROM ${db}.liquid_funds_asset_daily WHERE vault IN {slugs:Array(String)} AND day = {today:Date}`,
        params,
      )
    : [];
  const out = new Map<string, VaultSeries>(slugs.map((s) => [s, seriesOf(new Map(), s)]));
  for (const r of nav) {
    const byChain = seriesOf(out, r.vault).nav;
    const chain = Number(r.chain_id);
    if (!byChain.has(chain)) byChain.set(chain, new Map());
    byChain.get(chain)?.set(dateSeconds(r.day), {
      priceE18: BigInt(r.a ?? 0),
      navApy: { rolling7d: num(r.r7), rolling30d: num(r.r30), sec30d: num(r.sec) },
    });
  }
  for (const [vault, first] of days.firstDays ?? []) seriesOf(out, vault).firstDay = first;
  // Read here, the first price day is the vault's once a day of the range is in its price history.
  const firstOf = new Map(firsts.map((r) => [r.vault, dateSeconds(r.day)]));
  for (const r of vaultDays) {
    const series = seriesOf(out, r.vault);
    if (Number(r.price_day) === 1 && !days.firstDays) series.firstDay ??= firstOf.get(r.vault);
    const d = dayOf(series, dateSeconds(r.day));
    if (values) {
      d.tvlE18 = BigInt(r.a ?? 0);
      d.tvl30DayChange = Number(r.change);
      d.liquidE18 = BigInt(r.b ?? 0);
      d.liquidRange = Number(r.range);
    }
    if (Number(r.comp_day) === 1)
      d.compositionApy = { rolling7d: num(r.r7), rolling30d: num(r.r30), sec30d: num(r.sec) };
  }
  for (const r of assets)
    dayOf(seriesOf(out, r.vault), dateSeconds(r.day)).assets.push({
      slug: r.slug,
      priceE18: BigInt(r.price),
      apy7dE18: big(r.apy7d),
      apy30dE18: big(r.apy30d),
      weightE18: big(r.weight),
    });
  for (const r of prices)
    seriesOf(out, r.vault).liquidPrices.set(
      liquidKey(Number(r.chain_id), r.contract_address),
      BigInt(r.price),
    );
  return out;
}
