/**
 * Per-vault aggregates read at request time, up to the API clock, in one statement: the last 24 h
 * of deposit/withdraw volume in USD and (details) the open redemption requests with their USD
 * value, computed by the engine from the settled tables (exact 1e18-scaled integers, the same
 * numbers as docs/queries/api-vault-numbers.sql, which the views-parity tests check).
 */
import type { Store } from '../../store/client.ts';
import type { RegistryVault } from './registry.ts';
import { SHORT_READ } from './short-read.ts';

/** Pending redemptions of a vault: shares (e18 tokens) and their USD value (e18). */
export interface PendingRedemptions {
  sharesE18: bigint;
  valueE18: bigint;
}

export interface VaultFlows {
  /** vault slug -> volume24h, USD e18 (absent: 0). */
  volume: Map<string, bigint>;
  /** vault slug -> its open redemption requests (absent: none); undefined when not asked. */
  pending?: Map<string, PendingRedemptions>;
}

/**
 * volume24h per vault of {slugs} (rows of kind 'volume', `a` the USD e18): USD value of the volume
 * activity (the kinds views/settle/metrics_volume.sql counts) in ({from}, {now}]: per asset decimals, the
 * summed assets at the base asset's USD price (one truncation each), from `metrics_volume` (the
 * assets per second, settled from `transactions`) and the vault's configured price, given as
 * {prices} (exact decimal strings, in the order of {slugs}): a parameter costs the statement less
 * than a join with the head.
 */
export const volumeSql = (db: string) =>
  `SELECT vault, 'volume' AS kind, toString(sum(usd_e18)) AS a, '' AS b FROM (
     SELECT toString(vault) AS vault,
       intDiv(toInt256(reinterpretAsInt128(toDecimal128(arrayElement({prices:Array(String)}, indexOf({slugs:Array(String)}, toString(vault))), 18)))
         * toInt256(sum(assets)), toInt256(concat('1', repeat('0', assets_decimals)))) AS usd_e18
     FROM ${db}.metrics_volume FINAL
     WHERE vault IN {slugs:Array(String)} AND block_time > toDateTime({from:UInt32}) AND block_time <= toDateTime({now:UInt32})
     GROUP BY vault, assets_decimals
   ) GROUP BY vault`;

/**
 * The pending redemptions per vault of {slugs} (rows of kind 'pending', `a` the shares e18, `b`
 * their value e18), as `pending_redemptions` gives them, settled into
 * `metrics_pending_redemptions`: the AtomicQueue requests not filled or cancelled whose deadline
 * is after {now} (compared here with the API clock) and each ERC-7540 controller's
 * pendingRedeemRequest (no deadline); shares decimal-adjusted, and their value at the current
 * share price, truncated once per chain.
 */
export const pendingSql = (db: string) =>
  `SELECT vault, 'pending' AS kind, toString(sum(shares_e18)) AS a, toString(sum(value_e18)) AS b FROM (
     SELECT toString(vault) AS vault, chain_id, any(share_decimals) AS dec, any(share_usd_e18) AS share_usd,
       toInt256(sum(shares_raw)) * toInt256(concat('1', repeat('0', 18 - dec))) AS shares_e18,
       intDiv(share_usd * toInt256(sum(shares_raw)), toInt256(concat('1', repeat('0', dec)))) AS value_e18
     FROM ${db}.metrics_pending_redemptions FINAL
     WHERE vault IN {slugs:Array(String)} AND deadline > toDateTime({now:UInt32})
     GROUP BY vault, chain_id
   ) GROUP BY vault`;

/**
 * The volume24h (and, when `pending`, the open redemptions) of `vaults` at `now` (Unix seconds),
 * in one statement, at each vault's configured base-asset price (its registry entry).
 */
export async function loadFlows(
  store: Store,
  vaults: readonly RegistryVault[],
  now: number,
  pending: boolean,
): Promise<VaultFlows> {
  const db = store.database;
  const rows = await store.query<{ vault: string; kind: 'volume' | 'pending'; a: string; b: string }>(
    `${pending ? `${volumeSql(db)} UNION ALL ${pendingSql(db)}` : volumeSql(db)} ${SHORT_READ}`,
    {
      slugs: vaults.map((v) => v.slug),
      prices: vaults.map((v) => v.baseAssetUsdPrice),
      from: now - 86_400,
      now,
    },
  );
  const out: VaultFlows = { volume: new Map(), pending: pending ? new Map() : undefined };
  for (const r of rows)
    if (r.kind === 'volume') out.volume.set(r.vault, BigInt(r.a));
    else out.pending?.set(r.vault, { sharesE18: BigInt(r.a), valueE18: BigInt(r.b) });
  return out;
}
