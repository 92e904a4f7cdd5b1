-- /vaults/fees of one vault ({slug:String}) over [{start:Date}, {end:Date}]: every day of the range,
-- one column per fee kind (USD, 0 on days without fees), claims in their own column.
SELECT toString(d.day) AS date,
  ifNull(f.management_usd, 0) AS managementFee, ifNull(f.performance_usd, 0) AS performanceFee,
  ifNull(f.instant_redemption_usd, 0) AS instantRedemptionFee, ifNull(f.deposit_usd, 0) AS depositFee,
  ifNull(f.redemption_usd, 0) AS redemptionFee, ifNull(f.claimed_usd, 0) AS feesClaimed
FROM (SELECT arrayJoin(arrayMap(i -> {start:Date} + i, range(toUInt32({end:Date} - {start:Date}) + 1))) AS day) AS d
LEFT JOIN (SELECT * FROM vaultstream.fees_daily_by_kind WHERE vault = {slug:String}) AS f ON f.day = d.day
ORDER BY d.day
