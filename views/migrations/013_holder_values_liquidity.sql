-- Holder USD values and the details' liquidity numbers as views (issue 12: no metric formula
-- left in api/). The share's current USD value (rate x base-asset USD price) and every holder
-- balance's value are exact Int256 integers as in 008: USD scaled by 1e18, balances on the
-- common 10^-36 token scale the API ranks and sums cross-chain balances on.
-- vault_liquidity_daily puts TVL, liquid funds, liquidFundsRange, the open redemptions' value
-- and the shortfall of each day in one row (the API reads it for the day of its clock).

CREATE VIEW IF NOT EXISTS {{db}}.vault_share_usd_current {{on_cluster}} (
  vault String COMMENT 'Vault slug (every registered vault)',
  chain_id UInt32 COMMENT 'Price chain of the rate used (vault_price_current.chain_id); 0 when the vault has no rate yet',
  rate_raw UInt256 COMMENT 'Latest accountant rate on the price chain, base-asset raw units (0 without a rate)',
  rate_decimals UInt8 COMMENT 'Decimals of rate_raw',
  base_asset_usd_e18 Int256 COMMENT 'Configured USD price of the base asset, scaled by 1e18',
  share_usd_e18 Int256 COMMENT 'USD value of one whole share, scaled by 1e18: rate_raw * base_asset_usd_e18 / 10^rate_decimals (truncated); 0 without a rate',
  share_usd Float64 COMMENT 'USD value of one whole share (current share price times the base asset USD price)'
) AS
SELECT r.slug AS vault, if(c.found = 1, c.chain_id, toUInt32(0)) AS chain_id,
  if(c.found = 1, c.rate_raw, toUInt256(0)) AS rate_raw, if(c.found = 1, c.rate_decimals, toUInt8(0)) AS rate_decimals,
  toInt256(reinterpretAsInt128(r.base_asset_usd_price)) AS base_asset_usd_e18,
  intDiv(toInt256(rate_raw) * base_asset_usd_e18, toInt256(concat('1', repeat('0', rate_decimals)))) AS share_usd_e18,
  toFloat64(toString(reinterpret(share_usd_e18, 'Decimal256(18)'))) AS share_usd
FROM {{db}}.vault_registry AS r
LEFT JOIN (SELECT vault, chain_id, rate_raw, rate_decimals, toUInt8(1) AS found FROM {{db}}.vault_price_current) AS c
  ON c.vault = r.slug
COMMENT 'Current USD value of one share per vault (holder values of /vaults/holders and /token-holders)';

CREATE VIEW IF NOT EXISTS {{db}}.holder_values {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  chain_id UInt32 COMMENT 'Chain id; 101 for Solana',
  holder String COMMENT 'Holder address',
  balance_raw Int256 COMMENT 'Positive share balance, raw units of the chain',
  share_decimals UInt8 COMMENT 'Share decimals on the chain (vault_chain_decimals)',
  balance_e36 Int256 COMMENT 'Balance in 10^-36 shares (balance_raw * 10^(36 - share_decimals)): one exact scale across chains, for ranking and summing',
  balance Float64 COMMENT 'Balance, decimal-adjusted shares',
  value_usd_e18 Int256 COMMENT 'USD value of the balance, scaled by 1e18: balance_e36 * share_usd_e18 / 1e36 (truncated)',
  value_usd Float64 COMMENT 'USD value of the balance at the current share price'
) AS
SELECT b.vault AS vault, b.chain_id AS chain_id, b.holder AS holder, b.bal AS balance_raw, d.share_decimals AS share_decimals,
  balance_raw * toInt256(concat('1', repeat('0', 36 - share_decimals))) AS balance_e36,
  toFloat64(toString(reinterpret(intDiv(balance_e36, toInt256('1000000000000000000')), 'Decimal256(18)'))) AS balance,
  intDiv(balance_e36 * u.share_usd_e18, toInt256(concat('1', repeat('0', 36)))) AS value_usd_e18,
  toFloat64(toString(reinterpret(value_usd_e18, 'Decimal256(18)'))) AS value_usd
FROM (
  SELECT toString(vault) AS vault, chain_id, holder, sum(delta) AS bal FROM {{db}}.balance_deltas
  GROUP BY vault, chain_id, holder HAVING bal > 0
) AS b
INNER JOIN {{db}}.vault_chain_decimals AS d ON d.vault = b.vault AND d.chain_id = b.chain_id
INNER JOIN {{db}}.vault_share_usd_current AS u ON u.vault = b.vault
COMMENT 'Every positive (vault, chain, holder) balance with its USD value at the current share price (/vaults/holders)';

CREATE VIEW IF NOT EXISTS {{db}}.token_holder_values {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  address String COMMENT 'Holder address',
  token String COMMENT 'Token: the EVM vault address (lower-case; balances summed over every EVM chain) or the Solana mint (chain 101)',
  balance_e36 Int256 COMMENT 'Balance in 10^-36 shares: sum of holder_values.balance_e36 over the token chains',
  balance Float64 COMMENT 'Balance, decimal-adjusted shares',
  value_usd_e18 Int256 COMMENT 'USD value, scaled by 1e18: balance_e36 * share_usd_e18 / 1e36 (one truncation, after summing the chains)',
  value_usd Float64 COMMENT 'USD value of the holding at the current share price (/token-holders value)'
) AS
SELECT h.vault AS vault, h.holder AS address, if(h.sol, r.solana_mint, lower(r.vault_address)) AS token, h.balance_e36 AS balance_e36,
  toFloat64(toString(reinterpret(intDiv(balance_e36, toInt256('1000000000000000000')), 'Decimal256(18)'))) AS balance,
  intDiv(balance_e36 * h.share_usd_e18, toInt256(concat('1', repeat('0', 36)))) AS value_usd_e18,
  toFloat64(toString(reinterpret(value_usd_e18, 'Decimal256(18)'))) AS value_usd
FROM (
  SELECT vault, chain_id = 101 AS sol, holder, sum(balance_e36) AS balance_e36, any(u.share_usd_e18) AS share_usd_e18
  FROM (
    SELECT b.vault AS vault, b.chain_id AS chain_id, b.holder AS holder,
      b.bal * toInt256(concat('1', repeat('0', 36 - d.share_decimals))) AS balance_e36
    FROM (
      SELECT toString(vault) AS vault, chain_id, holder, sum(delta) AS bal FROM {{db}}.balance_deltas
      GROUP BY vault, chain_id, holder HAVING bal > 0
    ) AS b
    INNER JOIN {{db}}.vault_chain_decimals AS d ON d.vault = b.vault AND d.chain_id = b.chain_id
  ) AS x
  INNER JOIN {{db}}.vault_share_usd_current AS u ON u.vault = x.vault
  GROUP BY vault, sol, holder
) AS h
INNER JOIN {{db}}.vault_registry AS r ON r.slug = h.vault
COMMENT 'One row per (vault, holder, token): the EVM share summed over the EVM chains, the Solana mint apart, with its USD value (/token-holders)';

CREATE VIEW IF NOT EXISTS {{db}}.vault_liquidity_daily {{on_cluster}} (
  vault String COMMENT 'Vault slug',
  day Date COMMENT 'UTC day: the days of vault_tvl_daily and of liquid_funds_daily',
  as_of DateTime('UTC') COMMENT 'Time the liquid funds and the open redemptions are taken at: the end of the day, now for today',
  tvl_usd_e18 Int256 COMMENT 'TVL at the end of the day, USD scaled by 1e18 (vault_tvl_daily; 0 without supply)',
  tvl_usd Float64 COMMENT 'TVL, USD (details tvl)',
  tvl_30d_change_pct Float64 COMMENT 'tvl30DayChange, percent (vault_tvl_daily; 0 without supply)',
  liquid_funds_usd_e18 Int256 COMMENT 'Liquid funds, USD scaled by 1e18 (liquid_funds_daily; 0 without snapshots)',
  liquid_funds_usd Float64 COMMENT 'liquidFunds, USD',
  liquid_funds_range_pct Float64 COMMENT 'liquidFundsRange, percent: liquid_funds_usd_e18 / tvl_usd_e18 * 100 (quotient truncated at 1e-18), 0 when the TVL is 0',
  pending_redemptions_usd_e18 Int256 COMMENT 'USD scaled by 1e18 of the redemption requests pending at as_of (not filled or cancelled, deadline after as_of), at the current share price, truncated once per chain',
  pending_redemptions_usd Float64 COMMENT 'pendingRedemptionsValue at as_of, USD',
  shortfall_usd_e18 Int256 COMMENT 'max(0, pending_redemptions_usd_e18 - liquid_funds_usd_e18), USD scaled by 1e18',
  shortfall_usd Float64 COMMENT 'shortfall, USD'
) AS
WITH g AS (
  SELECT if(t.vault != '', t.vault, l.vault) AS vault, if(t.vault != '', t.day, l.day) AS day,
    least(toUInt32(toDateTime(day, 'UTC')) + 86399, toUInt32(now('UTC'))) AS t_as_of,
    ifNull(t.tvl_usd_e18, toInt256(0)) AS tvl_usd_e18, ifNull(t.tvl_30d_change_pct, 0) AS tvl_30d_change_pct,
    ifNull(l.liquid_funds_usd_e18, toInt256(0)) AS liquid_funds_usd_e18
  FROM (SELECT vault, day, tvl_usd_e18, tvl_30d_change_pct FROM {{db}}.vault_tvl_daily) AS t
  FULL OUTER JOIN (SELECT vault, day, liquid_funds_usd_e18 FROM {{db}}.liquid_funds_daily) AS l
    ON l.vault = t.vault AND l.day = t.day
),
pending AS (
  SELECT vault, day, sum(value_e18) AS value_e18 FROM (
    SELECT g.vault AS vault, g.day AS day, p.chain_id AS chain_id,
      intDiv(any(p.share_usd_e18) * toInt256(sum(p.shares_raw)), toInt256(concat('1', repeat('0', any(p.share_decimals))))) AS value_e18
    FROM g INNER JOIN {{db}}.pending_redemptions AS p ON p.vault = g.vault
    WHERE toUInt32(p.deadline) > g.t_as_of
    GROUP BY vault, day, chain_id
  ) GROUP BY vault, day
)
SELECT g.vault AS vault, g.day AS day, toDateTime(g.t_as_of, 'UTC') AS as_of, g.tvl_usd_e18 AS tvl_usd_e18,
  toFloat64(toString(reinterpret(g.tvl_usd_e18, 'Decimal256(18)'))) AS tvl_usd, g.tvl_30d_change_pct AS tvl_30d_change_pct,
  g.liquid_funds_usd_e18 AS liquid_funds_usd_e18,
  toFloat64(toString(reinterpret(g.liquid_funds_usd_e18, 'Decimal256(18)'))) AS liquid_funds_usd,
  if(g.tvl_usd_e18 = 0, 0,
    toFloat64(toString(reinterpret(intDiv(g.liquid_funds_usd_e18 * toInt256('1000000000000000000'), g.tvl_usd_e18), 'Decimal256(18)'))) * 100)
    AS liquid_funds_range_pct,
  ifNull(p.value_e18, toInt256(0)) AS pending_redemptions_usd_e18,
  toFloat64(toString(reinterpret(pending_redemptions_usd_e18, 'Decimal256(18)'))) AS pending_redemptions_usd,
  greatest(pending_redemptions_usd_e18 - g.liquid_funds_usd_e18, toInt256(0)) AS shortfall_usd_e18,
  toFloat64(toString(reinterpret(shortfall_usd_e18, 'Decimal256(18)'))) AS shortfall_usd
FROM g LEFT JOIN pending AS p ON p.vault = g.vault AND p.day = g.day
COMMENT 'Per vault and UTC day: TVL, liquid funds, liquidFundsRange, the open redemptions value and the shortfall (details; DESIGN section 8); the requests are their current state (a request filled later is not counted on earlier days)';
