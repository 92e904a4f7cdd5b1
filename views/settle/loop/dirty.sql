-- What the settle must recompute: one row per (input, vault) with the first UTC day d it changed
-- the vault from (input and day as views/settle-targets.ts names them) and, for the raw families,
-- the newest ingested_at seen, t (else empty), beside the clock's now less a millisecond (`now`:
-- views/settle.ts never takes `since` past it, a later insert may still take that millisecond).
--
-- - A raw row ingested after {since:DateTime64(3, 'UTC')} (less {margin_ms:UInt32}: on a server a
--   concurrent insert takes its ingested_at before it commits) changes its vault from the UTC day
--   of its block time (snapshots: their time); a registry entry, the whole vault.
-- - A change of service_settings (the primary chain) changes every vault.
-- - A vault whose watermark or one of whose chain blocks differs from the head's (it moved, or a
--   reorg took it back). Maps compare in their entries' order, so both sides are sorted by chain.
-- - {new_day:UInt8} = 1 (the clock's day is past {settled_day:Date}): every registered vault, from
--   the settled day on (it closes, and every grid gains today).
-- - {new_hour:UInt8} = 1 (the clock's hour is past {settled_hour:DateTime('UTC')}): every
--   registered vault's holder counts, from the day of that hour (it gains a sample).
-- - {holder_state:UInt8} = 0 (metrics_holder_since not yet built from the whole history, a store
--   migrated to views/migrations/026_holder_state.sql): every vault with a transfer, from the start.
WITH {since:DateTime64(3, 'UTC')} - toIntervalMillisecond({margin_ms:UInt32}) AS after
SELECT input, vault, d, t, toString(now64(3, 'UTC') - toIntervalMillisecond(1)) AS now FROM (
  SELECT 'rates' AS input, toString(vault) AS vault, toString(min(toDate(block_time))) AS d,
    toString(max(ingested_at)) AS t
  FROM {{db}}.rates_raw WHERE ingested_at > after GROUP BY vault
  UNION ALL
  SELECT 'transfers', toString(vault) AS vault, toString(min(toDate(block_time))), toString(max(ingested_at))
  FROM {{db}}.transfers_raw WHERE ingested_at > after GROUP BY vault
  UNION ALL
  SELECT 'redemptions', toString(vault) AS vault, toString(min(toDate(block_time))), toString(max(ingested_at))
  FROM {{db}}.redemptions_raw WHERE ingested_at > after GROUP BY vault
  UNION ALL
  SELECT 'activity', toString(vault) AS vault, toString(min(toDate(block_time))), toString(max(ingested_at))
  FROM {{db}}.activity_raw WHERE ingested_at > after GROUP BY vault
  UNION ALL
  SELECT 'snapshots', toString(vault) AS vault, toString(min(toDate(ts))), toString(max(ingested_at))
  FROM {{db}}.snapshots_raw WHERE ingested_at > after GROUP BY vault
  UNION ALL
  SELECT 'registry', toString(slug) AS vault, '1970-01-01', toString(max(ingested_at))
  FROM {{db}}.registry_raw WHERE ingested_at > after GROUP BY vault
  UNION ALL
  SELECT 'registry', toString(slug), '1970-01-01', toString(t)
  FROM (SELECT slug FROM {{db}}.registry_raw GROUP BY slug) AS r
  CROSS JOIN (SELECT max(updated_at) AS t FROM {{db}}.service_settings) AS s
  WHERE s.t > after
  UNION ALL
  SELECT 'watermarks', s.vault, '1970-01-01', ''
  FROM {{db}}.vault_settlement AS s
  INNER JOIN (SELECT toString(vault) AS vault, watermark, blocks FROM {{db}}.metrics_vault_head FINAL) AS h ON h.vault = s.vault
  WHERE h.watermark != s.watermark OR mapSort(h.blocks) != s.blocks
  UNION ALL
  SELECT 'day', slug, toString({settled_day:Date}), '' FROM {{db}}.vault_registry WHERE {new_day:UInt8} = 1
  UNION ALL
  SELECT 'hour', slug, toString(toDate({settled_hour:DateTime('UTC')})), '' FROM {{db}}.vault_registry
  WHERE {new_hour:UInt8} = 1
  UNION ALL
  SELECT DISTINCT 'transfers', toString(vault), '1970-01-01', '' FROM {{db}}.transfers_raw
  WHERE {holder_state:UInt8} = 0
)
