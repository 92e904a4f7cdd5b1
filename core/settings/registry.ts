/**
 * The registry settings: the vaults (every static field of the spec's VaultInfo, their
 * assets and price sources) and the chains they live on (RPC, confirmations, start block).
 * The devnet and the ingesters read them; the registry publisher puts them on the bus.
 */
import { z } from 'zod';
import { chainExtrasShape } from './evm.ts';

const address = z.string().regex(/^0x[a-fA-F0-9]{40}$/, 'expected a 0x-prefixed 20-byte hex address');
const maybeAddress = z.union([address, z.literal('')]).default('');
const chainEntry = z.object({ startBlock: z.number().int().nonnegative(), accountantType: z.string() });
/** The registry's per-chain keys of a vault (`chain.<key>`), as the spec names them. */
export const CHAIN_KEYS = [
  'mainnet',
  'base',
  'primary',
  'plasma',
  'arbitrum',
  'bsc',
  'worldchain',
  'avalanche',
] as const;
const chainMap = z
  .object(
    Object.fromEntries(CHAIN_KEYS.map((k) => [k, chainEntry.optional()])) as Record<
      (typeof CHAIN_KEYS)[number],
      z.ZodOptional<typeof chainEntry>
    >,
  )
  .strict()
  .prefault({});

export const VAULT_STATUSES = ['active', 'disabled', 'coming_soon', 'hidden'] as const;

const liquidAsset = z.object({
  contractAddress: address,
  symbol: z.string().min(1),
  iconUrl: z.string().default(''),
  decimals: z.number().int().min(0).max(36),
  price: z
    .number()
    .nonnegative()
    .default(1)
    .describe('USD price used until a price snapshot for the asset arrives.'),
  chainId: z.number().int().positive(),
  minimumSourceRules: z
    .array(
      z.object({
        sourceChain: z.number().int(),
        sourceParams: z.object({ excludeWallets: z.array(z.string()) }),
      }),
    )
    .default([]),
});

/**
 * Where an asset's USD price comes from: `fixed` (the configured `usd`), `rate` (`getRate()` of an
 * accountant or rate provider on `chainId`, `decimals` of the answer, times the USD price of its quote
 * asset) or `aggregator` (a Chainlink-style feed's `latestRoundData()` answer on `chainId`, `decimals` of it).
 */
export const priceSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('fixed'), usd: z.number().nonnegative() }).strict(),
  z
    .object({
      kind: z.literal('rate'),
      chainId: z.number().int().positive(),
      address,
      decimals: z.number().int().min(0).max(36),
      quoteUsdPrice: z.number().nonnegative().default(1),
    })
    .strict(),
  z
    .object({
      kind: z.literal('aggregator'),
      chainId: z.number().int().positive(),
      address,
      decimals: z.number().int().min(0).max(36),
    })
    .strict(),
]);
export type PriceSource = z.infer<typeof priceSourceSchema>;

/**
 * A yield asset the vault holds (docs/architecture.md, Units and formulas compositionApy): its `slug` names the
 * `targetComposition` item it is, `holdings` the token contracts whose `balanceOf(vault)` is
 * read on each chain, `price` where its USD price comes from. Its APYs come from its own
 * price history (ASSET_PRICE snapshots), its weight from the USD value held.
 */
const yieldAsset = z.object({
  slug: z.string().min(1),
  symbol: z.string().min(1),
  decimals: z.number().int().min(0).max(36),
  holdings: z.array(z.object({ chainId: z.number().int().positive(), contractAddress: address })).min(1),
  price: priceSourceSchema,
});
export type YieldAssetConfig = z.infer<typeof yieldAsset>;

/** A vault registry entry: every static field of the spec's VaultInfo, plus `status` and indexing facts. */
export const vaultSchema = z.object({
  slug: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes'),
  status: z.enum(VAULT_STATUSES).default('active'),
  vaultType: z.string().default('boring'),
  category: z.string().default('coreVault'),
  vaultAddress: address,
  coreShareOftAddress: maybeAddress,
  coreVaults: z
    .array(
      z.object({
        coreVaultAddress: z.string(),
        asset: z.string(),
        chainAssets: z.array(z.object({ chainId: z.number().int(), assetAddress: z.string() })),
      }),
    )
    .default([]),
  coreComposers: z
    .array(z.object({ asset: z.string(), composerAddress: z.string(), assetAddress: z.string() }))
    .default([]),
  accountantAddress: address,
  isHubAccountant: z.boolean().default(false),
  coreAccountant: z
    .object({ address: z.string(), isHub: z.boolean(), chain: chainMap })
    .default({ address: '', isHub: false, chain: {} }),
  authorityAddress: maybeAddress,
  tellerContractAddress: maybeAddress,
  decimals: z.number().int().min(0).max(36),
  decimalsOverride: z.array(z.record(z.string(), z.number().int())).default([]),
  chain: chainMap,
  solana: z
    .object({
      mintAddress: z.string(),
      oftStoreAddress: z.string(),
      composerAddress: z.string(),
      decimals: z.number().int(),
      startBlock: z.number().int(),
    })
    .optional(),
  liquidAssets: z.array(liquidAsset).default([]),
  yieldAssets: z
    .array(yieldAsset)
    .default([])
    .describe(
      'Yield assets (composition): everything else the vault holds that earns, with its price source.',
    ),
  name: z.string().min(1),
  symbol: z.string().min(1),
  icon: z.string().default(''),
  iconMini: z.string().default(''),
  targetComposition: z
    .array(z.object({ slug: z.string(), name: z.string(), description: z.string(), image: z.string() }))
    .default([]),
  chainIds: z
    .array(z.number().int().positive())
    .min(1)
    .describe('Chain ids the share token lives on (EVM); Solana is `solana`.'),
  baseAsset: z
    .object({
      symbol: z.string(),
      decimals: z.number().int().min(0).max(36),
      usdPrice: z.number().nonnegative(),
    })
    .default({ symbol: 'USD', decimals: 6, usdPrice: 1 })
    .describe("The vault's base asset: the unit of the accountant rate."),
  roles: z
    .record(z.string(), z.string())
    .optional()
    .describe('Role id to name map; defaults to the Nest numbering.'),
});
export type VaultConfig = z.infer<typeof vaultSchema>;

export const chainSchema = z.object({
  chainId: z.number().int().positive().describe('EIP-155 chain id.'),
  name: z.string().min(1).describe('Name in logs, `/status` and the metrics.'),
  rpcUrls: z
    .array(z.string().url())
    .default([])
    .describe('JSON-RPC URLs: the first preferred, the rest fallbacks; empty: the chain is not ingested.'),
  confirmations: z
    .number()
    .int()
    .nonnegative()
    .default(12)
    .describe('Blocks that must follow a block before it is read.'),
  startBlock: z
    .union([z.number().int().nonnegative(), z.literal('auto')])
    .default(0)
    .describe(
      "The first block read, or `auto`: the earliest deployment block of the chain's watched contracts, found by a binary search over eth_getCode and kept in the checkpoint.",
    ),
  pollIntervalMs: z
    .number()
    .int()
    .positive()
    .default(4000)
    .describe('Pause between two polls of the head once the chain is live.'),
  ...chainExtrasShape,
});
export type ChainConfig = z.infer<typeof chainSchema>;
