/**
 * The spec's resources as zod schemas (shared sub-objects, vaults, holders,
 * activity, the error body), with the units and formulas of docs/architecture.md, Units and formulas in
 * their descriptions. Each is a named component of the OpenAPI document.
 */
import { z } from 'zod';
import { CHAIN_KEYS } from '../../core/settings/registry.ts';
import { API_ERROR_CODES } from './errors.ts';

/** Named schemas, emitted as `#/components/schemas/<id>` in the OpenAPI document. */
export const components = z.registry<{ id: string }>();
export function named<T extends z.ZodType>(id: string, schema: T): T {
  components.add(schema, { id });
  return schema;
}

export const usd = (what: string) => z.number().meta({ description: `${what}, in USD.` });
export const percent = (what: string) =>
  z.number().meta({ description: `${what}, in percent (5.25 means 5.25%).` });
export const unixSeconds = (what: string) =>
  z
    .number()
    .int()
    .meta({ description: `${what}, Unix seconds.` });
export const tokens = (what: string) => z.number().meta({ description: `${what}, decimal-adjusted tokens.` });

export const SETTLED =
  'A settled day is a UTC day whose end every chain of the vault has been ingested past.';
export const NAV_APY =
  'navApy, from the close price P(d) (last accountant rate at or before the end of UTC day d on the requested chain, default 98866): ' +
  'rolling7d = (P(d)/P(d-7) - 1) * 365/7 * 100; rolling30d = (P(d)/P(d-30) - 1) * 365/30 * 100; ' +
  'sec30d = 2 * ((P(d)/P(d-30))^6 - 1) * 100. A member whose history is missing is null.';
export const COMPOSITION_APY =
  'compositionApy: weights w = compositionPct of the yield assets only (liquid assets and off-chain value excluded), ' +
  'renormalised to 100; rolling7d = sum(w/100 * asset apy7d), rolling30d = sum(w/100 * asset apy30d); ' +
  'sec30d = 2 * ((1 + rolling30d/100 * 30/365)^6 - 1) * 100.';

export const apyBlock = named(
  'ApyBlock',
  z
    .object({
      rolling7d: z.number().nullable().meta({ description: 'Rolling 7-day APY, percent.' }),
      rolling30d: z.number().nullable().meta({ description: 'Rolling 30-day APY, percent.' }),
      sec30d: z.number().nullable().meta({ description: 'SEC-style 30-day yield, percent.' }),
    })
    .meta({ description: `APY numbers in percent (5.25 means 5.25%). ${NAV_APY} ${COMPOSITION_APY}` }),
);

const chainEntry = named(
  'ChainEntry',
  z.object({
    startBlock: z.number().int(),
    accountantType: z.string().meta({ description: 'e.g. `spoke`.' }),
  }),
);
const chainMap = named(
  'ChainMap',
  z
    .object(
      Object.fromEntries(CHAIN_KEYS.map((k) => [k, chainEntry])) as Record<
        (typeof CHAIN_KEYS)[number],
        typeof chainEntry
      >,
    )
    .meta({ description: '`primary` is the chain with id 98866.' }),
);

const liquidAsset = named(
  'LiquidAsset',
  z.object({
    contractAddress: z.string(),
    symbol: z.string(),
    iconUrl: z.string(),
    decimals: z.number().int(),
    price: usd('Asset price'),
    chainId: z.number().int(),
    minimumSourceRules: z.array(
      z.object({
        sourceChain: z.number().int(),
        sourceParams: z.object({ excludeWallets: z.array(z.string()) }),
      }),
    ),
  }),
);
const targetCompositionItem = named(
  'TargetCompositionItem',
  z.object({ slug: z.string(), name: z.string(), description: z.string(), image: z.string() }),
);

/** VaultInfo fields up to and including `targetComposition` (shared by every vault resource). */
const vaultBase = {
  vaultType: z.string().meta({ description: 'e.g. `boring`.' }),
  category: z.string().meta({ description: 'e.g. `coreVault`.' }),
  vaultAddress: z.string(),
  coreShareOftAddress: z.string(),
  coreVaults: z.array(
    z.object({
      coreVaultAddress: z.string(),
      asset: z.string(),
      chainAssets: z.array(z.object({ chainId: z.number().int(), assetAddress: z.string() })),
    }),
  ),
  coreComposers: z.array(
    z.object({ asset: z.string(), composerAddress: z.string(), assetAddress: z.string() }),
  ),
  accountantAddress: z.string(),
  isHubAccountant: z.boolean(),
  coreAccountant: z.object({ address: z.string(), isHub: z.boolean(), chain: chainMap }),
  authorityAddress: z.string(),
  tellerContractAddress: z.string(),
  decimals: z.number().int(),
  decimalsOverride: z
    .array(z.record(z.string(), z.number().int()))
    .meta({ description: 'Objects mapping a chain id (string key) to decimals.' }),
  chain: chainMap,
  solana: z.object({
    mintAddress: z.string(),
    oftStoreAddress: z.string(),
    composerAddress: z.string(),
    decimals: z.number().int(),
    startBlock: z.number().int(),
  }),
  liquidAssets: z.array(liquidAsset),
  slug: z.string(),
  name: z.string(),
  symbol: z.string(),
  icon: z.string(),
  iconMini: z.string(),
  targetComposition: z.array(targetCompositionItem),
};

const TVL =
  'Sum over chains of totalSupply * accountant rate * base-asset USD price, plus the Solana supply valued alike';
export const HOLDERS = 'Distinct addresses with a positive balance across all chains (Solana included)';
export const tvl = usd(TVL);
const volume24h = usd('Deposits and withdrawals of the last 24 h');

export const vaultInfo = named(
  'VaultInfo',
  z.object({
    ...vaultBase,
    sec30d: percent("sec30d of the latest settled day's navApy"),
    tvl,
    numHolders: z.number().meta({ description: HOLDERS }),
    volume24h,
  }),
);

const liteFields = {
  tvl,
  tvl30DayChange: percent('(tvl now / tvl 30 days ago - 1) * 100; 0 when there is no tvl 30 days ago'),
  volume24h,
  apy: apyBlock.meta({ description: `The latest settled day's navApy. ${NAV_APY}` }),
  tokenPrice: z.number().meta({
    description: "Share price in the vault's base asset (accountant rate, decimal-adjusted).",
  }),
  tokenPriceUpdatedAtEpoch: unixSeconds('When the accountant rate last changed'),
  liquidFunds: usd(
    "Value of the vault's configured liquid assets held by the vault across chains (last snapshot; `liveLiquidity=true` reads the chains at request time)",
  ),
  liquidFundsRange: percent('liquidFunds / tvl * 100; 0 when tvl is 0'),
  holders: z.number().meta({ description: HOLDERS }),
};
export const vaultDetailsLite = named('VaultDetailsLite', z.object({ ...vaultBase, ...liteFields }));
export const vaultDetails = named(
  'VaultDetails',
  z.object({
    ...vaultBase,
    ...liteFields,
    tokenPriceUpdatedAt: z.iso.datetime().meta({ description: 'tokenPriceUpdatedAtEpoch as ISO 8601.' }),
    pendingRedemptions: tokens(
      'Shares of open redemption requests (not fulfilled, not cancelled, deadline not passed)',
    ),
    pendingRedemptionsValue: usd('Value of the open redemption requests'),
    shortfall: usd('max(0, pendingRedemptionsValue - liquidFunds)'),
  }),
);

export const tokenHolder = named(
  'TokenHolder',
  z.object({
    address: z.string().meta({ description: 'Holder wallet address.' }),
    tokenAddress: z.string().meta({
      description: 'EVM vault address (balances summed across EVM chains) or the Solana mint address.',
    }),
    balance: tokens('Balance'),
    value: usd('Value of the holding'),
  }),
);

const TX_TYPES = 'DEPOSIT, WITHDRAW, REDEEM_REQUEST, INSTANT_REDEEM, BRIDGE_IN or BRIDGE_OUT';
export const recentTransaction = named(
  'RecentTransaction',
  z.object({
    transactionHash: z.string(),
    logIndex: z.number().int(),
    transactionType: z.string().meta({ description: `One of ${TX_TYPES}.` }),
    vaultAddress: z.string(),
    user: z.string(),
    createdAt: unixSeconds('Block time'),
    shares: tokens('Shares'),
    sharesTokenAddress: z.string(),
    assets: tokens('Assets'),
    assetsTokenAddress: z.string(),
    chainId: z.number().int(),
  }),
);

export const failedRedemption = named(
  'FailedRedemption',
  z
    .object({
      requestTransactionHash: z.string(),
      user: z.string(),
      chainId: z.number().int(),
      amount: tokens('Shares requested'),
      requestedAt: unixSeconds("Block time of the request's latest update"),
      expiresAt: unixSeconds('Deadline'),
      queueAddress: z.string(),
      wantTokenContractAddress: z.string(),
      minPrice: z.number().meta({ description: 'Limit price in the want token.' }),
      isValid: z
        .boolean()
        .meta({ description: 'The user still held at least `amount` shares at the deadline.' }),
    })
    .meta({
      description:
        'A queue request whose latest update has amount > 0, with no fill after it, whose deadline has passed.',
    }),
);

export const roleAssignment = named(
  'RoleAssignment',
  z.object({
    vaultAddress: z.string(),
    user: z.string(),
    role: z.string().meta({
      description: "Role name from the vault's role map (e.g. `STRATEGIST`); unknown ids as `ROLE_<n>`.",
    }),
    enabled: z.boolean(),
    chainId: z.number().int(),
  }),
);

export const holderHistoryEntry = named(
  'HolderHistoryEntry',
  z
    .object({
      day: unixSeconds('Start of the UTC day'),
      chainId: z.number().int().meta({ description: 'Chain id; Solana is 101.' }),
      start: z.number().meta({ description: 'Holder count at 00:00 UTC.' }),
      end: z.number().meta({ description: 'Last hourly sample.' }),
      min: z.number(),
      max: z.number(),
      average: z.number(),
      count: z.number().meta({ description: 'Number of hourly samples (24 for a past day).' }),
    })
    .meta({ description: 'Holder count per vault, chain and UTC day, sampled at the end of every hour.' }),
);

export const topHolder = named(
  'TopHolder',
  z.object({
    chainId: z.number().int().meta({ description: 'Chain id; Solana is 101.' }),
    user: z.string(),
    balance: tokens('Balance'),
    holderSince: unixSeconds('When this balance last turned positive'),
  }),
);

export const feeSeriesPoint = named(
  'FeeSeriesPoint',
  z.object({ date: z.iso.date().meta({ description: 'UTC day.' }), value: usd('Fees of the day') }),
);

export const errorBody = named(
  'Error',
  z.object({
    error: z.string(),
    code: z.enum(API_ERROR_CODES),
    details: z
      .array(z.object({ in: z.enum(['query', 'path', 'body']), path: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'Validation errors: every bad parameter, named.' }),
  }),
);
