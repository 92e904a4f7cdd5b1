-- The newest `since` the settle may take: a millisecond before the oldest insert the consumers
-- have not completed (insert_journal, views/migrations/027_insert_journal.sql), whose raw rows may
-- be stored without its views' deltas: the settle that reads them once they are whole must find
-- them dirty still. Null when every insert completed. Read after dirty.sql: an insert begun
-- between the two is seen here.
SELECT toString(min(w) - toIntervalMillisecond(1)) AS first FROM (
  SELECT argMax(done, ver) AS d, argMax(written_at, ver) AS w FROM {{db}}.insert_journal GROUP BY slot
) WHERE d = 0 HAVING count() > 0
