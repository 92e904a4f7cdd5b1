CREATE OR REPLACE VIEW {{db}}.vault_settlement {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chains Array(UInt32) COMMENT 'Chains of the vault: its EVM chain ids, plus 101 when it has a Solana mint',
  watermark DateTime('UTC') COMMENT 'Oldest chain watermark among the vault chains (1970-01-01 when one chain has none yet), UTC',
  blocks Map(UInt32, UInt64) COMMENT 'Chain id -> newest stored block (Solana: slot) of each vault chain that has a watermark (chain_watermarks)',
  settled_through DateTime('UTC') COMMENT 'min(now, watermark): every UTC day ending at or before this time is settled',
  last_settled_day Date COMMENT 'Latest settled UTC day (the day before settled_through), whatever the vault history'
) AS
SELECT CAST(r.slug, 'String') AS vault, arrayConcat(r.chain_ids, if(r.solana_mint != '', [toUInt32({{solana_chain_id}})], [])) AS chains,
  toDateTime(arrayMin(arrayMap(c -> w.marks[c], chains)), 'UTC') AS watermark,
  mapSort(mapFilter((c, b) -> has(chains, c), w.numbers)) AS blocks,
  least(now('UTC'), watermark) AS settled_through,
  toDate(settled_through) - 1 AS last_settled_day
FROM {{db}}.vault_registry AS r
CROSS JOIN (
  SELECT mapFromArrays(groupArray(chain_id), groupArray(toUInt32(block_time))) AS marks,
    mapFromArrays(groupArray(chain_id), groupArray(block_number)) AS numbers
  FROM {{db}}.chain_watermarks
) AS w
COMMENT 'Settled days per vault: a UTC day is settled once every chain of the vault is ingested past its end (apy-history lists settled days only)';
