-- The consumers' write-ahead journal (streams/insert-journal.ts). An INSERT into a raw table
-- also writes the parts of the materialized views that read it, and the engine commits those
-- parts one by one: an insert cut short (a crash, a full disk, a view that fails) can leave the
-- raw rows stored and a view's deltas not, or the reverse. So each insert is written here first,
-- its rows exactly as they will be inserted and its deduplication token, in one part of its own;
-- an entry still pending is inserted again, the same bytes with the same token, before anything
-- else goes into that table: the parts already stored are deduplicated and the missing ones are
-- written. One slot per consumer process and bus partition, which handles one batch at a time.

CREATE TABLE IF NOT EXISTS {{db}}.insert_journal {{on_cluster}} (
  slot String COMMENT 'The writer: <consumer process id>/<topic>/<partition>',
  ver UInt64 COMMENT 'Sequence of the entry within its slot; the newest wins',
  done UInt8 COMMENT '1 = the insert is complete (or stored nothing); 0 = pending: it may be partly stored',
  tbl String COMMENT 'Table inserted into, in the service database',
  cols String COMMENT 'Columns of the rows, comma-separated',
  token String COMMENT 'insert_deduplication_token of the insert',
  rows_base64 String COMMENT 'The rows as TabSeparated text, base64 (empty once done)' CODEC(ZSTD(1)),
  written_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the entry was written'
) ENGINE = ReplacingMergeTree(ver)
ORDER BY slot
SETTINGS non_replicated_deduplication_window = 1000
COMMENT 'Write-ahead journal of the stream consumers'' inserts: a pending entry is inserted again, same rows and token, before its table takes another insert';

-- Every table a raw table's views write deduplicates the blocks of an insert run again (the views'
-- tables of 020, 024 and 026 keep one row per key, but a repeat must not even add a row).
ALTER TABLE {{db}}.chain_watermark_raw {{on_cluster}} MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {{db}}.activity_by_time {{on_cluster}} MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE {{db}}.transfer_sides {{on_cluster}} MODIFY SETTING non_replicated_deduplication_window = 1000;
