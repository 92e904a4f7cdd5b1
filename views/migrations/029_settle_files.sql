-- The settle step reads transfer_sides from its SQL files (views/settle): the table's comment
-- names the files that read it.
ALTER TABLE {{db}}.transfer_sides {{on_cluster}}
  MODIFY COMMENT 'Each side of each share transfer (transfers_raw) ordered by (vault, block_time): the changes of a vault from a day on, read without its history (views/settle/metrics_holders_daily.sql, metrics_holder_since.sql)';
