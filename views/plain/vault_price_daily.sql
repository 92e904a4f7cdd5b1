CREATE OR REPLACE VIEW {{db}}.vault_price_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'The vault price chain (vault_price_current.chain_id)',
  day Date COMMENT 'UTC day, from the first close on the price chain to today: the days of performance-history',
  price_e18 Int256 COMMENT 'Close share price in the base asset, scaled by 1e18',
  price Float64 COMMENT 'Close share price in the base asset, decimal-adjusted'
) AS
SELECT p.vault AS vault, p.chain_id AS chain_id, p.day AS day, p.price_e18 AS price_e18, p.price AS price
FROM {{db}}.price_close_daily AS p
INNER JOIN {{db}}.vault_price_current AS c ON c.vault = p.vault AND c.chain_id = p.chain_id
COMMENT 'The vault price history: daily closes on its price chain';
