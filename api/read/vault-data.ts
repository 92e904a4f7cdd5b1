/**
 * What the vault metrics and histories are computed from, read from the views for
 * a set of vaults up to `now` (the API clock, so time-relative answers are
 * testable): daily close rates and supply changes per chain, the liquid-asset and
 * composition snapshots, chain watermarks. Amounts stay exact (bigint).
 */
import type { Store } from '../../store/client.ts';

/** The last rate of a (vault, chain, UTC day). */
export interface DailyClose {
  day: number;
  rate: bigint;
  rateDecimals: number;
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
  /** chainId -> daily closes, ascending by day. */
  closes: Map<number, DailyClose[]>;
  /** chainId -> (day, net supply change that day) ascending, raw share units. */
  supplyChanges: Map<number, { day: number; delta: bigint }[]>;
  /** Ascending by `ts`. */
  snapshots: Snapshot[];
}

const pushTo = <K, V>(m: Map<K, V[]>, k: K, v: V) => {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
};

const seriesOf = (m: Map<string, VaultSeries>, vault: string): VaultSeries => {
  let s = m.get(vault);
  if (!s) {
    s = { closes: new Map(), supplyChanges: new Map(), snapshots: [] };
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
  const closes = await store.query<{
    vault: string;
    chain_id: number;
    day_start: string;
    rate: string;
    rate_decimals: number;
  }>(
    `SELECT vault, chain_id, toString(toUInt32(toDate(block_time)) * 86400) AS day_start,
       toString(argMax(rate, (block_time, block_number, log_index))) AS rate,
       argMax(rate_decimals, (block_time, block_number, log_index)) AS rate_decimals
     FROM ${db}.rates WHERE vault IN {slugs:Array(String)} AND block_time <= toDateTime({now:UInt32})
     GROUP BY vault, chain_id, day_start ORDER BY vault, chain_id, toUInt32(day_start)`,
    params,
  );
  const supply = await store.query<{ vault: string; chain_id: number; day_start: string; delta: string }>(
    `SELECT vault, chain_id, toString(toUInt32(day) * 86400) AS day_start, toString(sum(delta)) AS delta
     FROM ${db}.supply_deltas_daily WHERE vault IN {slugs:Array(String)} AND day <= toDate(toDateTime({now:UInt32}))
     GROUP BY vault, chain_id, day_start ORDER BY vault, chain_id, toUInt32(day_start)`,
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
     WHERE vault IN {slugs:Array(String)} AND kind IN ('ASSET_BALANCE', 'ASSET_PRICE', 'COMPOSITION')
       AND ts <= toDateTime({now:UInt32})
     ORDER BY vault, ts, kind, chain_id, token`,
    params,
  );
  const out = new Map<string, VaultSeries>(slugs.map((s) => [s, seriesOf(new Map(), s)]));
  for (const r of closes)
    pushTo(seriesOf(out, r.vault).closes, Number(r.chain_id), {
      day: Number(r.day_start),
      rate: BigInt(r.rate),
      rateDecimals: Number(r.rate_decimals),
    });
  for (const r of supply)
    pushTo(seriesOf(out, r.vault).supplyChanges, Number(r.chain_id), {
      day: Number(r.day_start),
      delta: BigInt(r.delta),
    });
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
