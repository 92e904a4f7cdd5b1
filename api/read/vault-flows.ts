/**
 * Per-vault aggregates read at request time, up to the API clock: holder counts,
 * the last 24 h of deposit/withdraw volume, and the open redemption requests.
 * Amounts stay raw (bigint) with their decimals.
 */
import type { Store } from '../../store/client.ts';

/** Activity kinds counted in `volume24h`: assets moved into or out of the vault. */
export const VOLUME_KINDS = ['DEPOSIT', 'WITHDRAW', 'INSTANT_REDEEM'] as const;

/** vault slug -> distinct addresses with a positive balance on any chain. */
export async function loadHolderCounts(store: Store, slugs: readonly string[]): Promise<Map<string, number>> {
  const rows = await store.query<{ vault: string; holders: string }>(
    `SELECT vault, toString(holders) AS holders FROM ${store.database}.vault_holders WHERE vault IN {slugs:Array(String)}`,
    { slugs },
  );
  return new Map(rows.map((r) => [r.vault, Number(r.holders)]));
}

/** Raw asset amounts of one vault, by asset decimals. */
export type RawByDecimals = { decimals: number; raw: bigint }[];

/** vault slug -> assets of VOLUME_KINDS activity in (now - 24 h, now], raw, by asset decimals. */
export async function loadVolume24h(
  store: Store,
  slugs: readonly string[],
  now: number,
): Promise<Map<string, RawByDecimals>> {
  const rows = await store.query<{ vault: string; decimals: number; raw: string }>(
    `SELECT vault, assets_decimals AS decimals, toString(sum(assets)) AS raw FROM ${store.database}.transactions
     WHERE vault IN {slugs:Array(String)} AND kind IN {kinds:Array(String)}
       AND block_time > toDateTime({from:UInt32}) AND block_time <= toDateTime({now:UInt32})
     GROUP BY vault, decimals`,
    { slugs, kinds: VOLUME_KINDS, from: now - 86_400, now },
  );
  const out = new Map<string, RawByDecimals>();
  for (const r of rows) {
    const list = out.get(r.vault) ?? [];
    list.push({ decimals: Number(r.decimals), raw: BigInt(r.raw) });
    out.set(r.vault, list);
  }
  return out;
}

/** vault slug -> chainId -> shares of the open redemption requests (not filled or cancelled, deadline after now). */
export async function loadPendingShares(
  store: Store,
  slugs: readonly string[],
  now: number,
): Promise<Map<string, Map<number, bigint>>> {
  // The view's `expired` state compares with the server's clock; the deadline is compared here with the API clock.
  const rows = await store.query<{ vault: string; chain_id: number; shares: string }>(
    `SELECT vault, chain_id, toString(sum(amount)) AS shares FROM ${store.database}.redemption_requests
     WHERE vault IN {slugs:Array(String)} AND state IN ('open', 'expired') AND deadline > toDateTime({now:UInt32})
     GROUP BY vault, chain_id`,
    { slugs, now },
  );
  const out = new Map<string, Map<number, bigint>>();
  for (const r of rows) {
    const m = out.get(r.vault) ?? new Map<number, bigint>();
    m.set(Number(r.chain_id), BigInt(r.shares));
    out.set(r.vault, m);
  }
  return out;
}
