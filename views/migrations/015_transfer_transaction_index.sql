-- Transfers carry the index of their transaction in the block (the EVM log's transactionIndex,
-- transfers.v2.avsc). Rows stored before, Solana transfers and events written with
-- transfers.v1 read -1: unknown.

ALTER TABLE {{db}}.transfers_raw {{on_cluster}}
  ADD COLUMN IF NOT EXISTS transaction_index Int32 DEFAULT -1
  COMMENT 'Index of the transaction in its block (EVM); -1 when unknown (Solana, transfers published before schema v2)'
  AFTER log_index;
