CREATE OR REPLACE VIEW {{db}}.fees_daily {{on_cluster}} AS
SELECT vault, day, kind, total AS usd_e18, total / 1e18 AS usd_float
FROM (SELECT vault, day, kind, sum(usd_e18) AS total FROM {{db}}.fees_daily_sums GROUP BY vault, day, kind)
WHERE total != 0
COMMENT 'Fees per vault, UTC day and kind: usd_e18 exact in 1e-18 USD';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN day 'UTC day';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN kind 'Fee kind: MANAGEMENT, PERFORMANCE (accrued), INSTANT_REDEMPTION, DEPOSIT, REDEMPTION (charged) or CLAIMED (paid out of accrued fees: exclude it when summing, or use fees_daily_by_kind)';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN usd_e18 'Fee value, USD scaled by 1e18 (exact)';
ALTER TABLE {{db}}.fees_daily {{on_cluster}} COMMENT COLUMN usd_float 'Fee value, USD (usd_e18 / 1e18, convenience)';
