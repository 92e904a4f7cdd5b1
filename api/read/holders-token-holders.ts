/**
 * GET /token-holders rows: one per (holder address, token address), the EVM vault
 * address with balances summed over every EVM chain and the Solana mint (chain 101)
 * apart, sorted by USD value descending, ties by address (docs/architecture.md, Endpoint semantics).
 *
 * The whole list is too big to hold: it is computed, sorted, into a snapshot MergeTree
 * table keyed by its row number, and then read back in pages by row number. Each page
 * is one short query, so the embedded engine (one query at a time) keeps serving other
 * requests while the body streams, and neither the engine nor the API holds more than a
 * page of rows after the snapshot is written. One snapshot serves every request of a
 * data version (holders-snapshots.ts owns their life).
 *
 * The rows and their USD values are the `token_holder_values` view's (migration 013:
 * balances summed over the EVM chains on one exact scale, valued at the current share
 * price of `vault_share_usd_current`); this module only numbers and pages them.
 */
import { randomBytes } from 'node:crypto';
import type { Store } from '../../store/client.ts';
import { SCALE } from './holders-decimals.ts';
import { toUnits } from './prices.ts';
import type { RegistryVault } from './registry.ts';

export interface TokenHolder {
  address: string;
  tokenAddress: string;
  balance: number;
  value: number;
}

interface PageRow {
  rn_s: string;
  address: string;
  token: string;
  balance_s: string;
  value_s: string;
}

export interface TokenHolderSnapshot {
  /** Rows in the snapshot (the response's `count`). */
  count: number;
  /** The snapshot table, database-qualified. */
  table: string;
  /** The rows in order, `pageSize` at a time (the table stays; `drop` removes it). */
  pages(pageSize: number): AsyncGenerator<TokenHolder[]>;
  /** Drops the snapshot table (idempotent). */
  drop(): Promise<void>;
}

/** Name prefix of snapshot tables (and of the per-request scratch tables of older releases). */
const SNAPSHOT_PREFIXES = ['token_holders_snapshot_', 'scratch_token_holders_'];

/**
 * Drops snapshot tables older than an hour, except `keep` (names without database):
 * left behind by a process that died. Live snapshots are rebuilt well within the hour.
 */
export async function dropStaleSnapshots(store: Store, keep: readonly string[] = []): Promise<void> {
  const stale = await store.query<{ name: string }>(
    `SELECT name FROM system.tables WHERE database = {db:String}
       AND arrayExists(p -> startsWith(name, p), {prefixes:Array(String)})
       AND NOT has({keep:Array(String)}, name)
       AND metadata_modification_time < now() - INTERVAL 1 HOUR`,
    { db: store.database, prefixes: SNAPSHOT_PREFIXES, keep },
  );
  for (const { name } of stale) await store.command(`DROP TABLE IF EXISTS ${store.database}.${name} SYNC`);
}

/** Computes the sorted (holder, token) list of `vaults` into a new snapshot table. */
export async function snapshotTokenHolders(
  store: Store,
  vaults: readonly RegistryVault[],
): Promise<TokenHolderSnapshot> {
  const db = store.database;
  const table = `${db}.${SNAPSHOT_PREFIXES[0]}${randomBytes(8).toString('hex')}`;
  await store.command(
    `CREATE TABLE ${table} (
       rn UInt64 COMMENT 'Position in the response, from 1',
       address String COMMENT 'Holder address',
       token String COMMENT 'EVM vault address or Solana mint',
       balance_x Int256 COMMENT 'Balance in 10^-${SCALE} tokens',
       value_e18 Int256 COMMENT 'USD value in 10^-18 USD'
     ) ENGINE = MergeTree ORDER BY rn
     COMMENT 'Snapshot of GET /token-holders for one data version; dropped once superseded and unread'`,
  );
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await store.command(`DROP TABLE IF EXISTS ${table} SYNC`);
  };
  try {
    await insertSnapshot(store, table, vaults);
    const [{ n }] = await store.query<{ n: string }>(`SELECT count() AS n FROM ${table}`);
    return { count: Number(n), table, pages: (size) => readPages(store, table, size), drop };
  } catch (err) {
    await drop();
    throw err;
  }
}

// The query parameters are bound by the store (no value is spliced into the SQL).
async function insertSnapshot(store: Store, table: string, vaults: readonly RegistryVault[]): Promise<void> {
  // One thread: rows are numbered in the order the sort emits them. The sort and the
  // view's aggregations spill to disk past 40 MB and inserts go in 128 Ki-row blocks,
  // which bounds the engine's peak memory.
  const sql = `INSERT INTO ${table}
    SELECT rowNumberInAllBlocks() + 1 AS rn, address, token, balance_x, value_e18 FROM (
      SELECT address, token, balance_e36 AS balance_x, value_usd_e18 AS value_e18
      FROM ${store.database}.token_holder_values
      WHERE vault IN {slugs:Array(String)}
      ORDER BY value_e18 DESC, address, token
    )
    SETTINGS max_threads = 1, optimize_aggregation_in_order = 1,
      max_bytes_before_external_sort = 40000000, max_bytes_before_external_group_by = 40000000,
      max_block_size = 16384, max_insert_block_size = 131072, min_insert_block_size_rows = 131072`;
  // Through `query`, which binds parameters (`command` does not); it returns no rows.
  await store.query(sql, { slugs: vaults.map((v) => v.slug) });
}

async function* readPages(store: Store, table: string, size: number): AsyncGenerator<TokenHolder[]> {
  let after = 0;
  for (;;) {
    const rows = await store.query<PageRow>(
      `SELECT toString(rn) AS rn_s, address, token, toString(balance_x) AS balance_s,
         toString(value_e18) AS value_s
       FROM ${table} WHERE rn > {after:UInt64} ORDER BY rn LIMIT {n:UInt32}`,
      { after, n: size },
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      address: r.address,
      tokenAddress: r.token,
      balance: toUnits(BigInt(r.balance_s), SCALE),
      value: toUnits(BigInt(r.value_s), 18),
    }));
    if (rows.length < size) return;
    after = Number(rows[rows.length - 1].rn_s);
  }
}
