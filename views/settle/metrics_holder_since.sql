-- metrics_holder_since (views/migrations/026_holder_state.sql): holderSince per (vault, chain,
-- holder), the rows of holder_since, for the holders of each dirty vault whose holderSince may
-- have changed from its first dirty day D on, without replaying the transfers before D.
--
-- Inputs: transfers
-- A transfer changes its holders' running balances from its block on.
--
-- Parameters: {vaults:Array(String)} the dirty vaults; {froms:Array(Date)} the first dirty UTC
-- day D of each, in the same order. views/settle.ts writes these rows over the stored rows of
-- each vault whose holderSince is from D on (a row's day is that of its holderSince).
--
-- holderSince is the last time a running balance went from <= 0 to > 0. From D on it is found
-- from the balance at D 00:00: per changed holder its current balance (the sum of its sides, as
-- in metrics_holders_daily.sql) and its sides from D on, newest first, so the sum of the rows
-- before a side is the balance after it (`crossings`). A holder with no crossing from D on keeps
-- a stored holderSince before D (the transfers before D did not change). One stored with a
-- holderSince from D on (`stored_from`, usually few or none) may have none there any more (a
-- retraction or a backfill removed the crossing it came from): its holderSince is taken from its
-- whole history, which is also right for one that still has a crossing from D on (its last
-- crossing is that one), so each holder's row is the latest of the two. `crossings` is named
-- once: a part named twice is planned and computed twice.
WITH {vaults:Array(String)} AS vaults, {froms:Array(Date)} AS froms,
  sides_from AS (
    SELECT toString(vault) AS vault, chain_id, holder, block_time, block_number, log_index, delta
    FROM {{db}}.transfer_sides FINAL
    WHERE has(vaults, vault) AND block_time >= toDateTime(arrayMin(froms), 'UTC')
      AND block_time >= toDateTime(froms[indexOf(vaults, vault)], 'UTC') AND removed = 0
  ),
  crossings AS (
    SELECT vault, chain_id, holder, maxIf(block_time, crossed) AS since FROM (
      SELECT vault, chain_id, holder, block_time, after > 0 AND after + x <= 0 AS crossed FROM (
        SELECT vault, chain_id, holder, block_time, x, cur,
          sum(x) OVER (PARTITION BY vault, chain_id, holder
            ORDER BY cur DESC, block_time DESC, block_number DESC, log_index DESC, x ASC
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS after
        FROM (
          SELECT vault, chain_id, holder, toDateTime(0, 'UTC') AS block_time, toUInt64(0) AS block_number,
            toUInt32(0) AS log_index, x, 1 AS cur
          FROM (
            SELECT toString(vault) AS vault, chain_id, holder, sum(delta) AS x FROM {{db}}.transfer_sides FINAL
            WHERE has(vaults, vault) AND removed = 0 GROUP BY vault, chain_id, holder
          )
          WHERE (vault, chain_id, holder) IN (SELECT vault, chain_id, holder FROM sides_from)
          UNION ALL
          SELECT vault, chain_id, holder, block_time, block_number, log_index, -delta AS x, 0 AS cur FROM sides_from
        )
      ) WHERE cur = 0
    ) GROUP BY vault, chain_id, holder HAVING countIf(crossed) > 0
  ),
  stored_from AS (
    SELECT toString(vault) AS vault, chain_id, holder FROM {{db}}.metrics_holder_since FINAL
    WHERE has(vaults, vault) AND since >= toDateTime(froms[indexOf(vaults, vault)], 'UTC')
  )
SELECT vault, chain_id, holder, max(since) AS since FROM (
  SELECT vault, chain_id, holder, since FROM crossings
  UNION ALL
  SELECT vault, chain_id, holder, maxIf(block_time, running > 0 AND running - delta <= 0) AS since FROM (
    SELECT vault, chain_id, holder, block_time, delta,
      sum(delta) OVER (PARTITION BY vault, chain_id, holder
        ORDER BY block_time, block_number, log_index, delta ROWS UNBOUNDED PRECEDING) AS running
    FROM (
      SELECT toString(vault) AS vault, chain_id, holder, block_time, block_number, log_index, delta
      FROM {{db}}.transfer_sides FINAL
      WHERE has(vaults, vault) AND removed = 0 AND (vault, chain_id, holder) IN (SELECT * FROM stored_from)
    )
  ) GROUP BY vault, chain_id, holder HAVING countIf(running > 0 AND running - delta <= 0) > 0
) GROUP BY vault, chain_id, holder
