-- metrics_holders_daily (views/migrations/024_metrics_holders.sql): the holder counts per
-- (vault, chain, UTC day), the rows of holder_history_daily, from each vault's first dirty day D
-- on without reading its transfers before D (transfer_sides, views/migrations/026_holder_state.sql).
--
-- Inputs: transfers, day, hour
-- A transfer changes the counts from its UTC day on (they carry forward); a new UTC day adds the
-- day to every vault's grid, and a new UTC hour a sample to the day of the last settled hour.
--
-- Parameters: {vaults:Array(String)} the dirty vaults; {froms:Array(Date)} the first dirty UTC
-- day D of each, in the same order. views/settle.ts writes these rows over the stored rows of
-- each vault from D on.
--
-- The rule, the view's restated from a starting balance (test/integration/views-settle-holders.test.ts
-- compares the two): the count at D 00:00 is the stored count at the end of D - 1 (days before D did not
-- change; without a stored row, no balance was positive before D). A changed holder's balance
-- at D 00:00 is its current balance (the sum of its sides, from the same table as the sides from
-- D on, so an insert half written on a server is seen in both or in neither, and errs only from
-- its own day on, which the next settle's rescan redoes) minus its changes from D on. Its
-- non-zero hourly changes from D on, summed from the newest back, give its balance at the end of
-- each such hour; the hour changes the (vault, chain)'s count by whether that balance is positive
-- minus whether it was at the hour's start (hours whose changes net to zero change no count).
-- The counts are then a step function from hour -1 (the count at D 00:00), sampled at every
-- ended hour from the first sample (D 00:00 with a stored row on D - 1, else the first changed
-- hour) on, one hour earlier for the count at 00:00 of the first day. Each input is named once:
-- a part named twice is planned and read twice. `block_time >= arrayMin(froms)` lets the sorting
-- key skip every vault's sides before the earliest D; the per-vault day filters the rest.
WITH {vaults:Array(String)} AS vaults, {froms:Array(Date)} AS froms,
  toInt64(toUInt32(toStartOfHour(now('UTC')))) AS now_hour
SELECT vault, chain_id, day, start, end, if(lead_in > 0, least(lowest, 0), lowest) AS min, highest AS max,
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
        arrayJoin(range(greatest(h, g - 3600), least(next, now_hour), 3600)) AS hn
      FROM (
        SELECT vault, chain_id, h, holders,
          min(if(h >= 0, h, NULL)) OVER (PARTITION BY vault, chain_id) AS first,
          max(b) OVER (PARTITION BY vault, chain_id) AS bs,
          leadInFrame(h, 1, now_hour) OVER (PARTITION BY vault, chain_id ORDER BY h ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next
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
                -- The current balance of each holder with a side from its vault's D on (a
                -- superset of the changed holders is harmless), at cur = 1 after every hour.
                SELECT vault, chain_id, holder, toInt64(4294967296) AS hn, x, 1 AS cur FROM (
                  SELECT toString(vault) AS vault, chain_id, holder, sum(delta) AS x FROM {{db}}.transfer_sides FINAL
                  WHERE has(vaults, vault) AND removed = 0 GROUP BY vault, chain_id, holder
                )
                WHERE (vault, chain_id, holder) IN (
                  SELECT toString(vault), chain_id, holder FROM {{db}}.transfer_sides
                  WHERE has(vaults, vault) AND block_time >= toDateTime(arrayMin(froms), 'UTC')
                    AND block_time >= toDateTime(froms[indexOf(vaults, vault)], 'UTC')
                )
                UNION ALL
                -- Each changed holder's net change per hour from D on, negated.
                SELECT vault, chain_id, holder, toInt64(toUInt32(toStartOfHour(block_time))) AS hn, -sum(delta) AS x, 0 AS cur
                FROM (
                  SELECT toString(vault) AS vault, chain_id, holder, block_time, delta
                  FROM {{db}}.transfer_sides FINAL
                  WHERE has(vaults, vault) AND block_time >= toDateTime(arrayMin(froms), 'UTC')
                    AND block_time >= toDateTime(froms[indexOf(vaults, vault)], 'UTC') AND removed = 0
                )
                GROUP BY vault, chain_id, holder, hn HAVING x != 0
              )
            ) WHERE cur = 0
            UNION ALL
            -- The stored count at the end of D - 1, as the count at hour -1.
            SELECT toString(vault), chain_id, toInt64(-1), end, toInt64(toUInt32(toDateTime(day + 1, 'UTC')))
            FROM {{db}}.metrics_holders_daily FINAL
            WHERE has(vaults, vault) AND froms[indexOf(vaults, vault)] > toDate('1970-01-01')
              AND day = froms[indexOf(vaults, vault)] - 1
          )
          GROUP BY vault, chain_id, h
        )
      )
      WHERE NOT (isNull(first) AND bs = 0)
    )
  )
  WHERE hn >= g
  GROUP BY vault, chain_id, day
)
