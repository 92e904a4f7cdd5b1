-- The write of one settle target (views/settle-targets.ts TARGETS) into its table {{table}}: the
-- target file's rows ({{rows}}) at version {version} + 1 and, for every row stored in the range
-- they replace, a tombstone at {version}, so ReplacingMergeTree(version, deleted) keeps the new
-- row where the file still produces one and hides the others.
--
-- {{columns}}: the table's own columns but version and deleted, read from the engine
-- (columns.sql): the migration that creates the table is their one definition, and the file's
-- rows are picked by those names. The range replaced is each dirty vault's rows whose UTC day
-- (that of the column {{day}}, a Date or a DateTime) is from the vault's first dirty day on; a
-- table rewritten whole per vault has {{day}} = 0 (the epoch) and binds 1970-01-01 for each.
--
-- On one thread: on a live chain a settle runs every second, and at the engine's default (a
-- thread per core) it took the core the API's event loop runs on (bench/live.ts).
INSERT INTO {{db}}.{{table}} ({{columns}}, version, deleted) SETTINGS max_threads = 1
SELECT {{columns}}, {version:UInt64} + 1, toUInt8(0) FROM (
{{rows}}
)
UNION ALL
SELECT {{columns}}, {version:UInt64}, toUInt8(1) FROM {{db}}.{{table}} FINAL
WHERE has({vaults:Array(String)}, vault)
  AND toDate({{day}}) >= {froms:Array(Date)}[indexOf({vaults:Array(String)}, vault)]
