-- compositionApy (docs/architecture.md#units-and-formulas): the weights of composition_daily's
-- yield assets only, renormalised to 100. Lists the days with at least one yield asset (the
-- API reads a missing day as every member null).
CREATE OR REPLACE VIEW {{db}}.composition_apy_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day with at least one yield asset (composition_daily row) by its end',
  assets UInt64 COMMENT 'Yield assets with a composition_daily row that day',
  rolling7d Nullable(Float64) COMMENT 'compositionApy rolling 7 days, percent: sum(w * apy7d) / sum(w) over the assets having both (weights renormalised over the yield assets); null when none has',
  rolling30d Nullable(Float64) COMMENT 'compositionApy rolling 30 days, percent: sum(w * apy30d) / sum(w); null when none has',
  sec30d Nullable(Float64) COMMENT 'compositionApy SEC 30-day, percent: 2 * ((1 + rolling30d/100 * 30/365)^6 - 1) * 100',
  settled UInt8 COMMENT '1 when the day is settled for the vault (the API shows apy/compositionApy on settled days only)'
) AS
SELECT a.vault AS vault, a.day AS day, a.assets AS assets,
  if(a.den7 = 0, NULL, toFloat64(toString(reinterpret(intDiv(a.num7, a.den7), 'Decimal256(18)')))) AS rolling7d,
  if(a.den30 = 0, NULL, toFloat64(toString(reinterpret(intDiv(a.num30, a.den30), 'Decimal256(18)')))) AS rolling30d,
  if(a.den30 = 0, NULL, 2 * (pow(1 + ((rolling30d / 100) * 30) / 365, 6) - 1) * 100) AS sec30d,
  toUInt8(a.day <= s.last_settled_day) AS settled
FROM (
  SELECT vault, day, count() AS assets,
    sumIf(assumeNotNull(weight_e18) * assumeNotNull(apy7d_e18), isNotNull(weight_e18) AND isNotNull(apy7d_e18)) AS num7,
    sumIf(assumeNotNull(weight_e18), isNotNull(weight_e18) AND isNotNull(apy7d_e18)) AS den7,
    sumIf(assumeNotNull(weight_e18) * assumeNotNull(apy30d_e18), isNotNull(weight_e18) AND isNotNull(apy30d_e18)) AS num30,
    sumIf(assumeNotNull(weight_e18), isNotNull(weight_e18) AND isNotNull(apy30d_e18)) AS den30
  FROM {{db}}.composition_daily GROUP BY vault, day
) AS a
LEFT JOIN {{db}}.vault_settlement AS s ON s.vault = a.vault
COMMENT 'compositionApy per vault and UTC day with at least one yield asset (docs/architecture.md#units-and-formulas): weights of the yield assets only, renormalised to 100';
