-- One daily holder-count view: holder_counts_daily (min/average over the samples from the first
-- transfer on) is retired in favour of holder_history_daily (docs/architecture.md#view-layout),
-- which the API, the Grafana dashboard and docs/queries read. A store migrated before keeps it
-- unless dropped here (views/plain only creates views).

DROP VIEW IF EXISTS {{db}}.holder_counts_daily {{on_cluster}};
