CREATE OR REPLACE VIEW {{db}}.vault_chain_decimals {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  share_decimals UInt8 COMMENT 'Share token decimals on this chain: the decimalsOverride entry, else the Solana mint decimals (101), else the vault decimals'
) AS
SELECT vault, chain_id,
  multiIf(mapContains(ov, toString(chain_id)), ov[toString(chain_id)],
    chain_id = {{solana_chain_id}} AND JSONType(info, 'solana') = 'Object', toUInt8(JSONExtractUInt(info, 'solana', 'decimals')), decimals) AS share_decimals
FROM (
  SELECT c.vault AS vault, c.chain_id AS chain_id, r.decimals AS decimals, r.info AS info,
    arrayFirst(m -> mapContains(m, toString(c.chain_id)),
      JSONExtract(r.info, 'decimalsOverride', 'Array(Map(String, UInt8))')) AS ov
  FROM (
    SELECT DISTINCT vault, chain_id FROM (
      SELECT slug AS vault, arrayJoin(arrayConcat(chain_ids, if(solana_mint != '', [toUInt32({{solana_chain_id}})], []))) AS chain_id
      FROM {{db}}.vault_registry
      UNION ALL SELECT CAST(vault, 'String'), chain_id FROM {{db}}.supply_deltas_daily
      UNION ALL SELECT CAST(vault, 'String'), chain_id FROM {{db}}.redemptions_raw
    )
  ) AS c
  INNER JOIN {{db}}.vault_registry AS r ON r.slug = c.vault
)
COMMENT 'Share decimals per vault and chain (every chain of the vault and every chain with supply or redemptions)';
