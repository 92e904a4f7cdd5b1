/**
 * The vault metrics and histories as the plain views (views/plain) compute them, read
 * for a set of vaults up to `now` (the API clock, so time-relative answers are
 * testable): per UTC day the close price and navApy of every chain (`nav_apy_daily`),
 * the TVL and its 30-day change, the liquid funds, liquidFundsRange, the open
 * redemptions' value and the shortfall (`vault_liquidity_daily`, over `vault_tvl_daily`,
 * `liquid_funds_daily` and `pending_redemptions`), the yield assets and compositionApy (`composition_daily`,
 * `composition_apy_daily`), and the vault's oldest chain watermark
 * (`vault_settlement`); plus the liquid-asset snapshots, which only the details'
 * `liveLiquidity=true` path prices live balances with. The API only looks values up
 * and shapes them: no metric is computed here.
 */
import type { Store } from '../../store/client.ts';
import type { ApyBlock } from './history-types.ts';

/** One (chain, UTC day) of `nav_apy_daily`: the close price (e18) and navApy. */
export interface DailyNav {
  priceE18: bigint;
  navApy: ApyBlock;
}

/** One yield asset on one day (`composition_daily`), exact e18 values. */
export interface DailyAsset {
  slug: string;
  priceE18: bigint;
  apy7dE18: bigint | null;
  apy30dE18: bigint | null;
  weightE18: bigint | null;
}

/** One UTC day of a vault from the views; absent members are 0 / empty there. */
export interface VaultDay {
  tvlE18: bigint;
  /** tvl30DayChange, percent. */
  tvl30DayChange: number;
  liquidE18: bigint;
  /** liquidFundsRange, percent (`vault_liquidity_daily`). */
  liquidRange: number;
  /** USD (e18) of the redemption requests open at the day's as-of time, and the shortfall (`vault_liquidity_daily`). */
  pendingValueE18: bigint;
  shortfallE18: bigint;
  compositionApy: ApyBlock;
  assets: DailyAsset[];
}

/** A state snapshot (ASSET_BALANCE, ASSET_PRICE or COMPOSITION). */
export interface Snapshot {
  kind: string;
  chainId: number;
  /** Address (lower-case) for balances and prices; the targetComposition slug for COMPOSITION. */
  token: string;
  ts: number;
  amount: bigint;
  /** Decimal strings as stored, null when the snapshot has none. */
  usdPrice: string | null;
  apy7d: string | null;
  apy30d: string | null;
  weight: string | null;
}

export interface VaultSeries {
  /** chainId -> day start (Unix seconds) -> close and navApy; days from the chain's first rate on. */
  nav: Map<number, Map<number, DailyNav>>;
  /** Day start -> the vault's numbers of that day (days of its price chain, up to today). */
  days: Map<number, VaultDay>;
  /** First day (start, Unix seconds) of the vault's price history (its price chain's first close). */
  firstDay: number | undefined;
  /** Oldest watermark (Unix seconds) among the vault's chains, 0 when one has none. */
  watermark: number;
  /** Liquid-asset balance and price snapshots up to now, ascending by `ts`. */
  snapshots: Snapshot[];
}

/** Series of a vault without data. */
export const emptySeries = (): VaultSeries => ({
  nav: new Map(),
  days: new Map(),
  firstDay: undefined,
  watermark: 0,
  snapshots: [],
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
      pendingValueE18: 0n,
      shortfallE18: 0n,
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

/** The series of every vault in `slugs` (a vault without data gets empty series). */
export async function loadVaultSeries(
  store: Store,
  slugs: readonly string[],
  now: number,
): Promise<Map<string, VaultSeries>> {
  const db = store.database;
  const params = { slugs, now };
  const today = "toDate(toDateTime({now:UInt32}, 'UTC'))";
  const day = (col: string) => `toString(toUInt32(toDateTime(${col}, 'UTC'))) AS day_start`;
  const nav = await store.query<{
    vault: string;
    chain_id: number;
    day_start: string;
    price_e18: string;
    r7: number | null;
    r30: number | null;
    sec: number | null;
  }>(
    `SELECT vault, chain_id, ${day('day')}, toString(price_e18) AS price_e18,
       rolling7d AS r7, rolling30d AS r30, sec30d AS sec
     FROM ${db}.nav_apy_daily WHERE vault IN {slugs:Array(String)} AND day <= ${today}`,
    params,
  );
  const priceDays = await store.query<{ vault: string; day_start: string }>(
    `SELECT vault, ${day('day')} FROM ${db}.vault_price_daily
     WHERE vault IN {slugs:Array(String)} AND day <= ${today} ORDER BY vault, day`,
    params,
  );
  const liquidity = await store.query<{
    vault: string;
    day_start: string;
    tvl: string;
    change: number;
    liquid: string;
    range: number;
    pending: string;
    shortfall: string;
  }>(
    `SELECT vault, ${day('day')}, toString(tvl_usd_e18) AS tvl, tvl_30d_change_pct AS change,
       toString(liquid_funds_usd_e18) AS liquid, liquid_funds_range_pct AS range,
       toString(pending_redemptions_usd_e18) AS pending, toString(shortfall_usd_e18) AS shortfall
     FROM ${db}.vault_liquidity_daily WHERE vault IN {slugs:Array(String)} AND day <= ${today}`,
    params,
  );
  const compApy = await store.query<{
    vault: string;
    day_start: string;
    r7: number | null;
    r30: number | null;
    sec: number | null;
  }>(
    `SELECT vault, ${day('day')}, rolling7d AS r7, rolling30d AS r30, sec30d AS sec
     FROM ${db}.composition_apy_daily WHERE vault IN {slugs:Array(String)} AND day <= ${today}`,
    params,
  );
  const assets = await store.query<{
    vault: string;
    day_start: string;
    slug: string;
    price: string;
    apy7d: string | null;
    apy30d: string | null;
    weight: string | null;
  }>(
    `SELECT vault, ${day('day')}, slug, toString(usd_price_e18) AS price, toString(apy7d_e18) AS apy7d,
       toString(apy30d_e18) AS apy30d, toString(weight_e18) AS weight
     FROM ${db}.composition_daily WHERE vault IN {slugs:Array(String)} AND day <= ${today}
     ORDER BY vault, day, position`,
    params,
  );
  const marks = await store.query<{ vault: string; t: string }>(
    `SELECT vault, toString(toUInt32(watermark)) AS t FROM ${db}.vault_settlement WHERE vault IN {slugs:Array(String)}`,
    params,
  );
  const snaps = await store.query<{
    vault: string;
    kind: string;
    chain_id: number;
    token_key: string;
    ts_s: string;
    amount_raw: string;
    usd_price_s: string | null;
    apy7d_s: string | null;
    apy30d_s: string | null;
    weight_s: string | null;
  }>(
    `SELECT vault, kind, chain_id, if(kind = 'COMPOSITION', token, lower(token)) AS token_key,
       toString(toUnixTimestamp(ts)) AS ts_s, toString(amount) AS amount_raw, toString(usd_price) AS usd_price_s,
       toString(apy7d) AS apy7d_s, toString(apy30d) AS apy30d_s, toString(weight) AS weight_s
     FROM ${db}.snapshots_raw FINAL
     WHERE vault IN {slugs:Array(String)} AND kind IN ('ASSET_BALANCE', 'ASSET_PRICE')
       AND ts <= toDateTime({now:UInt32})
     ORDER BY vault, ts, kind, chain_id, token`,
    params,
  );
  const out = new Map<string, VaultSeries>(slugs.map((s) => [s, seriesOf(new Map(), s)]));
  for (const r of nav) {
    const byChain = seriesOf(out, r.vault).nav;
    const chain = Number(r.chain_id);
    if (!byChain.has(chain)) byChain.set(chain, new Map());
    byChain.get(chain)?.set(Number(r.day_start), {
      priceE18: BigInt(r.price_e18),
      navApy: { rolling7d: num(r.r7), rolling30d: num(r.r30), sec30d: num(r.sec) },
    });
  }
  // The price-history days first, in order: `days` iterates oldest first.
  for (const r of priceDays) {
    const series = seriesOf(out, r.vault);
    series.firstDay ??= Number(r.day_start);
    dayOf(series, Number(r.day_start));
  }
  for (const r of liquidity) {
    const d = dayOf(seriesOf(out, r.vault), Number(r.day_start));
    d.tvlE18 = BigInt(r.tvl);
    d.tvl30DayChange = Number(r.change);
    d.liquidE18 = BigInt(r.liquid);
    d.liquidRange = Number(r.range);
    d.pendingValueE18 = BigInt(r.pending);
    d.shortfallE18 = BigInt(r.shortfall);
  }
  for (const r of compApy)
    dayOf(seriesOf(out, r.vault), Number(r.day_start)).compositionApy = {
      rolling7d: num(r.r7),
      rolling30d: num(r.r30),
      sec30d: num(r.sec),
    };
  for (const r of assets)
    dayOf(seriesOf(out, r.vault), Number(r.day_start)).assets.push({
      slug: r.slug,
      priceE18: BigInt(r.price),
      apy7dE18: big(r.apy7d),
      apy30dE18: big(r.apy30d),
      weightE18: big(r.weight),
    });
  for (const r of marks) seriesOf(out, r.vault).watermark = Number(r.t);
  for (const r of snaps)
    seriesOf(out, r.vault).snapshots.push({
      kind: r.kind,
      chainId: Number(r.chain_id),
      token: r.token_key,
      ts: Number(r.ts_s),
      amount: BigInt(r.amount_raw),
      usdPrice: r.usd_price_s,
      apy7d: r.apy7d_s,
      apy30d: r.apy30d_s,
      weight: r.weight_s,
    });
  return out;
}

/** chainId -> watermark (Unix seconds of the newest ingested block). */
export async function loadWatermarks(store: Store): Promise<Map<number, number>> {
  const rows = await store.query<{ chain_id: number; t: string }>(
    `SELECT chain_id, toString(toUnixTimestamp(block_time)) AS t FROM ${store.database}.chain_watermarks`,
  );
  return new Map(rows.map((r) => [Number(r.chain_id), Number(r.t)]));
}
