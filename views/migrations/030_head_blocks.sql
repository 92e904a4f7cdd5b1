-- The head holds, beside each vault's watermark, the newest stored block of each of its chains
-- as the settle that wrote the row saw them (vault_settlement.blocks, read in the same statement
-- as the watermark): the per-chain provenance of the vault resources (X-Data-Blocks). The settle
-- rewrites a head whenever its watermark or one of its blocks differs from vault_settlement's, so
-- the rows written before (an empty map) are rewritten by the first settle after this migration.
ALTER TABLE {{db}}.metrics_vault_head {{on_cluster}}
  ADD COLUMN IF NOT EXISTS blocks Map(UInt32, UInt64)
  COMMENT 'Chain id -> newest stored block of that chain (Solana: slot) as the settle saw it, for each chain of the vault with a watermark (vault_settlement)'
  AFTER watermark;
