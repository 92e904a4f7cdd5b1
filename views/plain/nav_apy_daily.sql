-- The 7- and 30-day look-backs are window frames (RANGE n PRECEDING AND n PRECEDING), not
-- self-joins (docs/architecture.md#units-and-formulas, navApy).
CREATE OR REPLACE VIEW {{db}}.nav_apy_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain whose closes give the price P',
  day Date COMMENT 'UTC day d',
  price_e18 Int256 COMMENT 'P(d): close share price, scaled by 1e18',
  price_7d_ago_e18 Int256 COMMENT 'P(d-7) scaled by 1e18; 0 when there is no close that early',
  price_30d_ago_e18 Int256 COMMENT 'P(d-30) scaled by 1e18; 0 when there is no close that early',
  rolling7d Nullable(Float64) COMMENT 'navApy rolling 7 days, percent: (P(d)/P(d-7) - 1) * 365/7 * 100; null without P(d-7)',
  rolling30d Nullable(Float64) COMMENT 'navApy rolling 30 days, percent: (P(d)/P(d-30) - 1) * 365/30 * 100; null without P(d-30)',
  sec30d Nullable(Float64) COMMENT 'navApy SEC 30-day yield, percent: 2 * ((P(d)/P(d-30))^6 - 1) * 100; null without P(d-30)',
  settled UInt8 COMMENT '1 when the day is settled for the vault (vault_settlement)'
) AS
SELECT p.vault AS vault, p.chain_id AS chain_id, p.day AS day, p.price_e18 AS price_e18,
  p.price_e18_7 AS price_7d_ago_e18, p.price_e18_30 AS price_30d_ago_e18,
  if(price_7d_ago_e18 = 0, NULL,
    (toFloat64(toString(reinterpret(intDiv(price_e18 * toInt256('1000000000000000000'), price_7d_ago_e18), 'Decimal256(18)'))) - 1)
      * (365 / 7) * 100) AS rolling7d,
  if(price_30d_ago_e18 = 0, NULL,
    (toFloat64(toString(reinterpret(intDiv(price_e18 * toInt256('1000000000000000000'), price_30d_ago_e18), 'Decimal256(18)'))) - 1)
      * (365 / 30) * 100) AS rolling30d,
  if(price_30d_ago_e18 = 0, NULL,
    2 * (pow(toFloat64(toString(reinterpret(intDiv(price_e18 * toInt256('1000000000000000000'), price_30d_ago_e18), 'Decimal256(18)'))), 6) - 1)
      * 100) AS sec30d,
  toUInt8(p.day <= s.last_settled_day) AS settled
FROM (
  SELECT vault, chain_id, day, price_e18,
    sum(price_e18) OVER (PARTITION BY vault, chain_id ORDER BY toUInt32(day) RANGE BETWEEN 7 PRECEDING AND 7 PRECEDING) AS price_e18_7,
    sum(price_e18) OVER (PARTITION BY vault, chain_id ORDER BY toUInt32(day) RANGE BETWEEN 30 PRECEDING AND 30 PRECEDING) AS price_e18_30
  FROM {{db}}.price_close_daily
) AS p
LEFT JOIN {{db}}.vault_settlement AS s ON s.vault = p.vault
COMMENT 'navApy per (vault, chain, UTC day) from the daily closes (docs/architecture.md#units-and-formulas); the API shows it for settled days only';
