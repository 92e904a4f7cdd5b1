/**
 * A synthetic history for the metrics benchmark (bench/views.ts), written straight into the raw
 * tables of a fresh store: `vaults` vaults on `chains` chains (98866 first) with `days` UTC days
 * of history ending today. Per vault: on every chain four accountant rates a day and a few mints
 * and deposits a day to a rotating set of holders; on the primary chain a liquid-asset balance
 * and a COMPOSITION snapshot a day, and a management and a performance fee a day; every chain's
 * watermark a minute ago. Amounts grow with the day so closes, TVL and APYs move.
 */
import type { Store } from '../store/client.ts';
import { benchRegistryRow, benchSlug, benchSlugSql, benchVaultSql } from './vault-registry.ts';

export interface HistorySize {
  vaults: number;
  chains: number;
  days: number;
  /** Mints (and deposits) per vault, chain and day. */
  perDay: number;
}

const CHAINS = [98866, 1, 56, 8453, 9745, 43114, 10, 42161];
const DAY = 86_400;
export const USDC = '0x00000000000000000000000000000000c0ffee01';

/** Writes the history; returns the registered slugs. */
export async function writeHistory(store: Store, size: HistorySize): Promise<string[]> {
  const db = store.database;
  const now = Math.floor(Date.now() / 1000);
  const first = Math.floor(now / DAY) * DAY - (size.days - 1) * DAY;
  const chains = CHAINS.slice(0, size.chains);
  const slugs = Array.from({ length: size.vaults }, (_, i) => benchSlug(i));
  await store.insert(
    'registry_raw',
    slugs.map((_, i) =>
      benchRegistryRow(i, {
        chainIds: chains,
        usdc: USDC,
        vault: {
          targetComposition: [{ slug: 'tbill', name: 'T-Bill', description: 'Treasury bills', image: '' }],
        },
      }),
    ),
  );
  const slug = benchSlugSql;
  const evm = benchVaultSql;
  // Event columns for vault v, chain c, time t and a block number n unique per (table, row).
  const cols = (c: string, t: string, n: string) =>
    `concat(toString(${c}), ':0x', lower(hex(${n})), ':0') AS event_id, ${c} AS chain_id, ${n} AS block_number,
     concat('0x', lower(hex(${n}))) AS block_hash, toDateTime(${t}, 'UTC') AS block_time,
     concat('0x', lower(hex(${n}))) AS tx_hash, 0 AS log_index, 0 AS removed, 1 AS ver, ${slug('v')} AS vault`;
  // One row per (day d, vault v, chain c, k < per), with a running index i.
  const list = (xs: number[]) => `[${xs.join(',')}]`;
  const g = (per: number) =>
    `(SELECT d, v, c, k, ((d * ${size.vaults} + v) * ${chains.length} + ci - 1) * ${per} + k AS i
      FROM (SELECT number AS d FROM numbers(${size.days}))
      ARRAY JOIN ${list([...Array(size.vaults).keys()])} AS v
      ARRAY JOIN ${list(chains)} AS c, arrayEnumerate(${list(chains)}) AS ci
      ARRAY JOIN range(${per}) AS k)`;
  const sql = (s: string) => store.command(s);
  await sql(`INSERT INTO ${db}.rates_raw (event_id, chain_id, block_number, block_hash, block_time, tx_hash, log_index,
      removed, ver, vault, accountant, rate, rate_decimals, source, is_paused)
    SELECT ${cols('c', `${first} + d * ${DAY} + k * 21600 + 60`, '1000000000 + i')},
      '0xacc', toUInt256(1000000 + d * 150 + k * 30 + v), 6, 'EVENT', 0 FROM ${g(4)}`);
  await sql(`INSERT INTO ${db}.transfers_raw (event_id, chain_id, block_number, block_hash, block_time, tx_hash,
      log_index, removed, ver, vault, token, from_address, to_address, amount)
    SELECT ${cols('c', `${first} + d * ${DAY} + k * 600 + 120`, '2000000000 + i')}, ${evm('v')},
      '0x0000000000000000000000000000000000000000', concat('0x', leftPad(lower(hex(1 + i % 997)), 40, '0')),
      toUInt256((i % 1000 + 1) * 1000000) FROM ${g(size.perDay)}`);
  await sql(`INSERT INTO ${db}.activity_raw (event_id, chain_id, block_number, block_hash, block_time, tx_hash,
      log_index, removed, ver, vault, kind, user, shares, shares_token, assets, assets_token, assets_decimals)
    SELECT ${cols('c', `${first} + d * ${DAY} + k * 600 + 120`, '3000000000 + i')}, 'DEPOSIT',
      concat('0x', leftPad(lower(hex(1 + i % 997)), 40, '0')), toUInt256((i % 1000 + 1) * 1000000), ${evm('v')},
      toUInt256((i % 1000 + 1) * 1000000), '${USDC}', 6 FROM ${g(size.perDay)}`);
  await sql(`INSERT INTO ${db}.fees_raw (event_id, chain_id, block_number, block_hash, block_time, tx_hash, log_index,
      removed, ver, vault, kind, token, amount, decimals, usd_price, usd_e18)
    SELECT ${cols('c', `${first} + d * ${DAY} + k * 3600 + 300`, '4000000000 + i')},
      ['MANAGEMENT', 'PERFORMANCE'][k + 1], '0xfee', toUInt256(1000000 + d), 6, 1,
      toInt256(1000000 + d) * toInt256('1000000000000') FROM ${g(2)} WHERE c = 98866`);
  await sql(`INSERT INTO ${db}.snapshots_raw (vault, chain_id, block_number, ts, kind, token, amount, decimals,
      usd_price, apy7d, apy30d, weight, is_paused)
    SELECT ${slug('v')}, 98866, d, toDateTime(${first} + d * ${DAY} + 3000, 'UTC'), s.1, s.2,
      toUInt256(1000000000000 + d * 1000000), 6, 1, 4.5, 4.7, 50, 0
    FROM ${g(1)} ARRAY JOIN [('ASSET_BALANCE', '${USDC}'), ('COMPOSITION', 'tbill')] AS s WHERE c = 98866`);
  await sql(`INSERT INTO ${db}.blocks_raw (chain_id, block_number, block_hash, parent_hash, block_time, removed, ver)
    SELECT c, 90000000, concat('0xb', toString(c)), '0x1', toDateTime(${now - 60}, 'UTC'), 0, 1
    FROM (SELECT arrayJoin([${chains.join(',')}]) AS c)`);
  return slugs;
}
