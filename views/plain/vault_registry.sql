CREATE OR REPLACE VIEW {{db}}.vault_registry {{on_cluster}} AS
SELECT CAST(slug, 'String') AS slug, status, updated_at, vault_address, name, symbol, decimals, chain_ids, solana_mint,
  base_asset_usd_price, JSONExtractString(info, 'baseAsset', 'symbol') AS base_asset_symbol, base_asset_decimals, info
FROM {{db}}.registry_raw FINAL
COMMENT 'Latest registry entry per vault slug';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN slug 'Vault slug, the registry key';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN status 'CMS status: active, disabled, coming_soon, hidden';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN updated_at 'Version of the entry; the newest wins';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN vault_address 'Share token / vault address (lower-case)';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN name 'Display name';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN symbol 'Share token symbol';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN decimals 'Share token decimals';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN chain_ids 'EVM chain ids the share token lives on';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN solana_mint 'Solana mint of the share token, empty when none';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN base_asset_usd_price 'Configured USD price of the base asset (fallback when no price snapshot)';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN base_asset_symbol 'Symbol of the base asset (the unit of the share price), e.g. USDC';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN base_asset_decimals 'Decimals of the base asset (the accountant rate unit)';
ALTER TABLE {{db}}.vault_registry {{on_cluster}} COMMENT COLUMN info 'Full registry entry (static VaultInfo fields) as JSON';
