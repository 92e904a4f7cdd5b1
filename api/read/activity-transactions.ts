/**
 * GET /vaults/recent-transactions: the newest `limit` transactions of each vault and
 * its count of transactions (every type) in the 7 x 24 h before `now`.
 */
import type { Store } from '../../store/client.ts';
import { chainDecimals } from './holders-decimals.ts';
import { toUnits } from './prices.ts';
import type { RegistryVault } from './registry.ts';

const WEEK_SECONDS = 7 * 86_400;

export interface RecentTransaction {
  transactionHash: string;
  logIndex: number;
  transactionType: string;
  vaultAddress: string;
  user: string;
  createdAt: number;
  shares: number;
  sharesTokenAddress: string;
  assets: number;
  assetsTokenAddress: string;
  chainId: number;
}

export interface VaultRecentTransactions {
  vaultAddress: string;
  transactionCount7d: number;
  recentTransactions: RecentTransaction[];
}

interface Row {
  vault: string;
  chain_id: number;
  tx_hash: string;
  log_index: number;
  kind: string;
  user: string;
  created_at: string;
  shares_s: string;
  shares_token: string;
  assets_s: string;
  assets_token: string;
  assets_decimals: number;
}

/** Recent transactions of `vaults` (in their order); `now` in Unix seconds. */
export async function recentTransactions(
  store: Store,
  vaults: readonly RegistryVault[],
  opts: { limit: number; chainId?: number; now: number },
): Promise<VaultRecentTransactions[]> {
  if (vaults.length === 0) return [];
  const db = store.database;
  const chainFilter = opts.chainId === undefined ? '' : 'AND chain_id = {chain:UInt32}';
  const params = {
    slugs: vaults.map((v) => v.slug),
    n: opts.limit,
    now: opts.now,
    since: opts.now - WEEK_SECONDS,
    ...(opts.chainId !== undefined && { chain: opts.chainId }),
  };
  const rows = await store.query<Row>(
    `SELECT vault, chain_id, tx_hash, log_index, kind, user,
       toString(toUnixTimestamp(block_time)) AS created_at, toString(shares) AS shares_s, shares_token,
       toString(assets) AS assets_s, assets_token, assets_decimals
     FROM ${db}.transactions
     WHERE vault IN {slugs:Array(String)} ${chainFilter}
     ORDER BY vault, block_time DESC, block_number DESC, log_index DESC, chain_id
     LIMIT {n:UInt32} BY vault`,
    params,
  );
  const counts = await store.query<{ vault: string; n: string }>(
    `SELECT vault, toString(count()) AS n FROM ${db}.transactions
     WHERE vault IN {slugs:Array(String)} ${chainFilter}
       AND block_time > toDateTime({since:Int64}, 'UTC') AND block_time <= toDateTime({now:Int64}, 'UTC')
     GROUP BY vault`,
    params,
  );
  const weekly = new Map(counts.map((c) => [c.vault, Number(c.n)]));
  return vaults.map((v) => ({
    vaultAddress: v.vaultAddress,
    transactionCount7d: weekly.get(v.slug) ?? 0,
    recentTransactions: rows
      .filter((r) => r.vault === v.slug)
      .map((r) => ({
        transactionHash: r.tx_hash,
        logIndex: Number(r.log_index),
        transactionType: r.kind,
        vaultAddress: v.vaultAddress,
        user: r.user,
        createdAt: Number(r.created_at),
        shares: toUnits(BigInt(r.shares_s), chainDecimals(v, Number(r.chain_id))),
        sharesTokenAddress: r.shares_token,
        assets: toUnits(BigInt(r.assets_s), Number(r.assets_decimals)),
        assetsTokenAddress: r.assets_token,
        chainId: Number(r.chain_id),
      })),
  }));
}
