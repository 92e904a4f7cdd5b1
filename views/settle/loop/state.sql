-- Where the settle resumes (metrics_settle_state, views/migrations/018_metrics_tables.sql, 024,
-- 026): the ingestion time it settled through, the UTC day and hour of its clock, the version it
-- last wrote, and whether metrics_holder_since was built from the whole history. No row: never
-- settled.
SELECT toString(since) AS since, toString(settled_day) AS day, toString(settled_hour) AS hour,
  toString(version) AS version, holder_state AS holders
FROM {{db}}.metrics_settle_state FINAL WHERE id = 0
