CREATE OR REPLACE VIEW {{db}}.vault_daily {{on_cluster}} AS
SELECT t.vault AS vault, t.chain_id AS chain_id, t.day AS day, t.supply_raw AS supply_raw, t.share_decimals AS decimals,
  if(t.price_source = 'chain', own.close_rate, pcd.close_rate) AS close_rate,
  if(t.price_source = 'chain', own.rate_decimals, pcd.rate_decimals) AS rate_decimals,
  toFloat64(toString(reinterpret(t.price_e18, 'Decimal256(18)'))) AS price_float,
  r.base_asset_usd_price AS base_asset_usd_price, t.tvl_usd AS tvl_usd_float
FROM {{db}}.tvl_chain_daily AS t
INNER JOIN {{db}}.vault_registry AS r ON r.slug = t.vault
LEFT JOIN {{db}}.price_close_daily AS own ON own.vault = t.vault AND own.chain_id = t.chain_id AND own.day = t.day
LEFT JOIN {{db}}.vault_price_current AS pc ON pc.vault = t.vault
LEFT JOIN {{db}}.price_close_daily AS pcd ON pcd.vault = t.vault AND pcd.chain_id = pc.chain_id AND pcd.day = t.day
COMMENT 'Per (vault, chain, UTC day): supply, the close price used for the chain (its own, else the vault price chain) and TVL in USD at that price; vault totals: vault_tvl_daily';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN vault 'Vault slug';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN chain_id 'Chain id; 101 for Solana';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN day 'UTC day';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN supply_raw 'Share supply on the chain at the end of the day, raw units';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN decimals 'Share decimals on the chain (decimalsOverride applied)';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN close_rate 'Close rate used for the chain: its own close, else the vault price chain close; base-asset raw units';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN rate_decimals 'Decimals of close_rate';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN price_float 'Share price used for the chain, base asset per share';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN base_asset_usd_price 'Configured USD price of the base asset';
ALTER TABLE {{db}}.vault_daily {{on_cluster}} COMMENT COLUMN tvl_usd_float 'TVL of the chain at its own price, USD (equals tvl_chain_daily.tvl_usd)';
