/**
 * Per-vault aggregates read at request time, up to the API clock: the last 24 h of deposit/withdraw volume in USD and the open redemption requests
 * with their USD value, computed by the engine from the settled tables (exact 1e18-scaled integers, the same
 * SQL as docs/queries/api-vault-numbers.sql, which views-parity.test.ts checks).
 */
import type { Store } from '../../store/client.ts';
import type { RegistryVault } from './registry.ts';

/**
 * vault slug -> USD value (e18) of the volume activity (VOLUME_KINDS of views/settle-targets.ts) in (now - 24 h, now]: per
 * asset decimals, the summed assets at the base asset's USD price (one truncation each), from
 * `metrics_volume` (the assets per second, settled from `transactions` by views/settle.ts).
 */
export async function loadVolume24h(
  store: Store,
  vaults: readonly RegistryVault[],
  now: number,
): Promise<Map<string, bigint>> {
  const rows = await store.query<{ vault: string; usd: string }>(
    `SELECT vault, toString(sum(usd_e18)) AS usd FROM (
       SELECT toString(vault) AS vault,
         intDiv(toInt256(reinterpretAsInt128(toDecimal128(transform(vault, {slugs:Array(String)}, {prices:Array(String)}, '0'), 18)))
           * toInt256(sum(assets)), toInt256(concat('1', repeat('0', assets_decimals)))) AS usd_e18
       FROM ${store.database}.metrics_volume FINAL
       WHERE vault IN {slugs:Array(String)} AND block_time > toDateTime({from:UInt32}) AND block_time <= toDateTime({now:UInt32})
       GROUP BY vault, assets_decimals
     ) GROUP BY vault`,
    {
      slugs: vaults.map((v) => v.slug),
      prices: vaults.map((v) => v.baseAssetUsdPrice),
      from: now - 86_400,
      now,
    },
  );
  return new Map(rows.map((r) => [r.vault, BigInt(r.usd)]));
}

/** Open redemption requests of a vault: shares (e18 tokens) and their USD value (e18). */
export interface PendingRedemptions {
  sharesE18: bigint;
  valueE18: bigint;
}

/**
 * vault slug -> its open redemption requests (not filled or cancelled, deadline after
 * now) from the `pending_redemptions` view (through `metrics_pending_redemptions`): shares decimal-adjusted, and their value at
 * the current share price, truncated once per chain.
 */
export async function loadPendingShares(
  store: Store,
  slugs: readonly string[],
  now: number,
): Promise<Map<string, PendingRedemptions>> {
  // The requests as pending_redemptions gives them, settled into metrics_pending_redemptions
  // (views/settle.ts); the deadline is compared here with the API clock.
  const rows = await store.query<{ vault: string; shares: string; value: string }>(
    `SELECT vault, toString(sum(shares_e18)) AS shares, toString(sum(value_e18)) AS value FROM (
       SELECT toString(vault) AS vault, chain_id, any(share_decimals) AS dec, any(share_usd_e18) AS share_usd,
         toInt256(sum(shares_raw)) * toInt256(concat('1', repeat('0', 18 - dec))) AS shares_e18,
         intDiv(share_usd * toInt256(sum(shares_raw)), toInt256(concat('1', repeat('0', dec)))) AS value_e18
       FROM ${store.database}.metrics_pending_redemptions FINAL
       WHERE vault IN {slugs:Array(String)} AND deadline > toDateTime({now:UInt32})
       GROUP BY vault, chain_id
     ) GROUP BY vault`,
    { slugs, now },
  );
  return new Map(rows.map((r) => [r.vault, { sharesE18: BigInt(r.shares), valueE18: BigInt(r.value) }]));
}
