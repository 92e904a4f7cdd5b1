/**
 * The holder tables of the settle step from the first changed day on
 * (docs/architecture.md#precomputed-metrics), so a change costs what it changed, not the vault's
 * history. Each query gives, for the days (or holderSince values) from a vault's first dirty day
 * D on, exactly the rows of the view that defines the table (the settle tests compare them):
 * - a holder's balance at D 00:00 is its current balance minus its changes from D on
 *   (transfer_sides, migration 026: the changes read from D on; the current balances of the
 *   changed holders one aggregate over the vault's sides);
 * - holder counts (holder_history_daily): the count at D 00:00 (the stored count at the end of
 *   D - 1), carried forward hour by hour over the changed holders' balances from D on;
 * - holderSince (holder_since): the last time from D on that a running balance, started at D
 *   00:00, went from <= 0 to > 0; without one, the stored value when it is before D (the
 *   transfers before D did not change), else (a change removed the crossing it came from) the
 *   holder's whole history;
 * - top holders (vault_top_holders): the ranked balances (vault_top_balances, every current
 *   balance of the vault but no transfer) with the stored holderSince.
 * The same rule as the views, restated from a starting balance: hours whose changes net to zero
 * for a holder change no count; a (vault, chain)'s first sample is the hour of its first non-zero
 * change; a vault's days before D are unchanged, so a (vault, chain) with a stored row on D - 1
 * has samples from D 00:00 on.
 */
import type { Store } from '../store/client.ts';

/** Vault -> first dirty UTC day (YYYY-MM-DD). */
export type FromDays = ReadonlyMap<string, string>;

export const quote = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

const EPOCH = '1970-01-01';

/** `(vault = v AND cond(day of v)) OR ...` over `from`; '0' when empty. */
function perVault(from: FromDays, cond: (day: string) => string): string {
  const terms = [...from].map(([v, d]) => `(vault = ${quote(v)} AND ${cond(d)})`);
  return terms.length ? terms.join(' OR ') : '0';
}

const vaultList = (from: FromDays) => `[${[...from.keys()].map(quote).join(', ')}]`;

/** The current transfer sides of the vaults from their day on (removed ones hidden). */
function sidesFrom(db: string, from: FromDays): string {
  return `SELECT toString(vault) AS vault, chain_id, holder, block_time, block_number, log_index, delta
    FROM ${db}.transfer_sides FINAL
    WHERE (${perVault(from, (d) => `block_time >= toDateTime(${quote(d)}, 'UTC')`)}) AND removed = 0`;
}

/**
 * The current balance of each holder with a transfer side from its vault's day on (any state: a
 * superset is harmless), as rows of the sides' shape (`columns`) at `cur` = 1. It is the sum of
 * the holder's current sides (one plain aggregate over the vault's sides, no window): taken from
 * the same table as the sides from D on, so a settle that reads while an insert is half written
 * (on a server its materialized views are separate writes) sees that transfer in both or in
 * neither, and errs only from the transfer's own day on, which the next settle's rescan redoes.
 * (balance_deltas holds the same sums by holder, but is another view's write.)
 */
function currentOfChanged(db: string, from: FromDays, columns: string): string {
  return `SELECT vault, chain_id, holder, ${columns}, x, 1 AS cur FROM (
      SELECT toString(vault) AS vault, chain_id, holder, sum(delta) AS x FROM ${db}.transfer_sides FINAL
      WHERE vault IN ${vaultList(from)} AND removed = 0 GROUP BY vault, chain_id, holder
    )
    WHERE (vault, chain_id, holder) IN (
      SELECT toString(vault), chain_id, holder FROM ${db}.transfer_sides
      WHERE ${perVault(from, (d) => `block_time >= toDateTime(${quote(d)}, 'UTC')`)}
    )`;
}

/**
 * The rows of holder_history_daily for each vault of `from` from its day D on (the columns of
 * metrics_holders_daily), reading only what changed: the count at D 00:00 is the stored count at
 * the end of D - 1 (days before D did not change; without a stored row, no balance was positive
 * before D). Each changed holder's current balance and its non-zero hourly changes from D on,
 * summed from the newest back, give its balance at the end of each such hour; the hour changes
 * the (vault, chain)'s count by whether that balance is positive minus whether it was at the
 * hour's start. The counts are then a step function from hour -1 (the count at D 00:00), sampled
 * at every ended hour from the first sample (D 00:00 with a stored row on D - 1, else the first
 * changed hour) on, one hour earlier for the count at 00:00 of the first day. Each input is
 * named once (a part named twice is planned and read twice).
 */
export function holderCountsSql(db: string, from: FromDays): string {
  const before = perVault(
    new Map([...from].filter(([, d]) => d > EPOCH)),
    (d) => `day = toDate(${quote(d)}) - 1`,
  );
  const now = `toInt64(toUInt32(toStartOfHour(now('UTC'))))`;
  return `SELECT vault, chain_id, day, start, end, if(lead_in > 0, least(lowest, 0), lowest) AS min, highest AS max,
  total / (samples + lead_in) AS average, samples + lead_in AS count
FROM (
  SELECT vault, chain_id, toDate(toDateTime(hn, 'UTC')) AS day, argMin(prev, hn) AS start,
    argMax(holders, hn) AS end, min(holders) AS lowest, max(holders) AS highest, sum(holders) AS total,
    count() AS samples,
    toUInt64(dateDiff('hour', toStartOfDay(toDateTime(min(hn), 'UTC')), toDateTime(min(hn), 'UTC'))) AS lead_in
  FROM (
    SELECT vault, chain_id, hn, g, holders,
      lagInFrame(holders, 1, 0) OVER (PARTITION BY vault, chain_id ORDER BY hn ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS prev
    FROM (
      SELECT vault, chain_id, holders,
        if(isNull(first), bs, if(bs = 0, assumeNotNull(first), least(assumeNotNull(first), bs))) AS g,
        arrayJoin(range(greatest(h, g - 3600), least(next, ${now}), 3600)) AS hn
      FROM (
        SELECT vault, chain_id, h, holders,
          min(if(h >= 0, h, NULL)) OVER (PARTITION BY vault, chain_id) AS first,
          max(b) OVER (PARTITION BY vault, chain_id) AS bs,
          leadInFrame(h, 1, ${now}) OVER (PARTITION BY vault, chain_id ORDER BY h ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next
        FROM (
          SELECT vault, chain_id, h, max(b) AS b,
            sum(sum(change)) OVER (PARTITION BY vault, chain_id ORDER BY h ROWS UNBOUNDED PRECEDING) AS holders
          FROM (
            SELECT vault, chain_id, hn AS h, toInt64(bal_end > 0) - toInt64(bal_end + x > 0) AS change, toInt64(0) AS b
            FROM (
              SELECT vault, chain_id, hn, x, cur,
                sum(x) OVER (PARTITION BY vault, chain_id, holder ORDER BY hn DESC
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS bal_end
              FROM (
                ${currentOfChanged(db, from, 'toInt64(4294967296) AS hn')}
                UNION ALL
                SELECT vault, chain_id, holder, toInt64(toUInt32(toStartOfHour(block_time))) AS hn, -sum(delta) AS x, 0 AS cur
                FROM (${sidesFrom(db, from)}) GROUP BY vault, chain_id, holder, hn HAVING x != 0
              )
            ) WHERE cur = 0
            UNION ALL
            SELECT toString(vault), chain_id, toInt64(-1), end, toInt64(toUInt32(toDateTime(day + 1, 'UTC')))
            FROM ${db}.metrics_holders_daily FINAL WHERE ${before}
          )
          GROUP BY vault, chain_id, h
        )
      )
      WHERE NOT (isNull(first) AND bs = 0)
    )
  )
  WHERE hn >= g
  GROUP BY vault, chain_id, day
)`;
}

/**
 * holderSince of the holders of the vaults of `from` whose balance went positive from the vault's
 * day on, in one pass: per changed holder its current balance (first) and its transfer sides from
 * D on, newest first, so the sum of the rows before a side is the balance after it. `only`: a
 * further condition on the holders (vault, chain_id, holder).
 */
function crossingsFrom(db: string, from: FromDays, only = '1'): string {
  return `SELECT vault, chain_id, holder, maxIf(block_time, crossed) AS since FROM (
    SELECT vault, chain_id, holder, block_time, after > 0 AND after + x <= 0 AS crossed FROM (
      SELECT vault, chain_id, holder, block_time, x, cur,
        sum(x) OVER (PARTITION BY vault, chain_id, holder
          ORDER BY cur DESC, block_time DESC, block_number DESC, log_index DESC, x ASC
          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS after
      FROM (
        SELECT * FROM (
          ${currentOfChanged(db, from, "toDateTime(0, 'UTC') AS block_time, toUInt64(0) AS block_number, toUInt32(0) AS log_index")}
        ) WHERE ${only}
        UNION ALL
        SELECT vault, chain_id, holder, block_time, block_number, log_index, -delta AS x, 0 AS cur
        FROM (${sidesFrom(db, from)}) WHERE ${only}
      )
    ) WHERE cur = 0
  ) GROUP BY vault, chain_id, holder HAVING countIf(crossed) > 0`;
}

/** holderSince of the holders of `sides` from their whole history (a running balance from 0). */
function crossingsWhole(sides: string): string {
  return `SELECT vault, chain_id, holder, maxIf(block_time, running > 0 AND running - delta <= 0) AS since FROM (
    SELECT vault, chain_id, holder, block_time, delta,
      sum(delta) OVER (PARTITION BY vault, chain_id, holder
        ORDER BY block_time, block_number, log_index, delta ROWS UNBOUNDED PRECEDING) AS running
    FROM (${sides})
  ) GROUP BY vault, chain_id, holder HAVING countIf(running > 0 AND running - delta <= 0) > 0`;
}

interface HolderKey {
  vault: string;
  chain_id: number;
  holder: string;
}

/**
 * The rows of holder_since for the vaults of `from` whose holderSince may have changed (the
 * columns of metrics_holder_since): those whose balance went positive from the vault's day on,
 * and those stored with a holderSince from that day on that no longer have one there (a
 * retraction or a backfill removed the crossing it came from): theirs from the whole history.
 */
export async function holderSinceSql(store: Store, from: FromDays): Promise<string> {
  const db = store.database;
  const storedFrom = `SELECT toString(vault) AS vault, chain_id, holder FROM ${db}.metrics_holder_since FINAL
    WHERE ${perVault(from, (d) => `since >= toDateTime(${quote(d)}, 'UTC')`)}`;
  const stale = await store.query<HolderKey>(
    `SELECT vault, chain_id, holder FROM (${storedFrom})
     WHERE (vault, chain_id, holder) NOT IN (
       SELECT vault, chain_id, holder FROM (${crossingsFrom(db, from, `(vault, chain_id, holder) IN (${storedFrom})`)})
     )`,
  );
  const recomputed = crossingsFrom(db, from);
  if (!stale.length) return recomputed;
  const keys = stale.map((k) => `(${quote(k.vault)}, ${Number(k.chain_id)}, ${quote(k.holder)})`).join(', ');
  const whole = `SELECT toString(vault) AS vault, chain_id, holder, block_time, block_number, log_index, delta
    FROM ${db}.transfer_sides FINAL
    WHERE vault IN [${[...new Set(stale.map((k) => quote(k.vault)))].join(', ')}] AND removed = 0
      AND (toString(vault), chain_id, holder) IN [${keys}]`;
  return `SELECT * FROM (${recomputed}) UNION ALL ${crossingsWhole(whole)}`;
}

/** The rows of vault_top_holders for `vaults`, with holderSince from metrics_holder_since. */
export function topHoldersSql(db: string, vaults: readonly string[]): string {
  const list = `[${vaults.map(quote).join(', ')}]`;
  return `SELECT t.vault AS vault, t.chain_id AS chain_id, t.holder AS holder, t.balance_raw AS balance_raw,
      t.share_decimals AS share_decimals, t.balance_e36 AS balance_e36, s.since AS since
    FROM (SELECT * FROM ${db}.vault_top_balances WHERE vault IN ${list}) AS t
    LEFT JOIN (
      SELECT toString(vault) AS vault, chain_id, holder, since FROM ${db}.metrics_holder_since FINAL WHERE vault IN ${list}
    ) AS s ON s.vault = t.vault AND s.chain_id = t.chain_id AND s.holder = t.holder`;
}
