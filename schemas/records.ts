/**
 * TypeScript types and semantic validation for every event family. The Avro
 * schemas in `schemas/avro/` define the wire shape; these zod schemas mirror them
 * field for field (a unit test holds them together) and add what Avro cannot say:
 * hex patterns, uint256 ranges, enum membership.
 */
import { z } from 'zod';

const MAX_UINT256 = (1n << 256n) - 1n;
export const uint256 = z
  .string()
  // abort: zod runs later checks after a failed one, and BigInt() of a non-number throws.
  .regex(/^(0|[1-9][0-9]{0,77})$/, {
    error: 'expected a non-negative integer as a decimal string',
    abort: true,
  })
  .refine((s) => BigInt(s) <= MAX_UINT256, 'exceeds uint256');
const decimalString = z
  .string()
  .regex(/^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/, 'expected a decimal number as a string');
const optionalDecimal = z.union([z.literal(''), decimalString]);
const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 0x-prefixed 32-byte hex hash');
const base58 = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,88}$/, 'expected a base58 string');
/** EVM address or Solana base58 account. */
export const account = z.union([z.string().regex(/^0x[0-9a-fA-F]{40}$/), base58], {
  error: 'expected an EVM address (0x + 40 hex) or a Solana base58 address',
});
const hashOrSig = z.union([hex32, base58], {
  error: 'expected a 0x 32-byte hash or a Solana base58 signature',
});
const slug = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a vault slug');
const int32 = z.number().int().min(-2147483648).max(2147483647);
const nonNegInt = z.number().int().nonnegative();
// The end of ClickHouse `DateTime` (2106-02-07): later times cannot be stored as they are.
const unixSeconds = z.number().int().min(0).max(4_294_967_295);

const chainFields = {
  chainId: int32.positive(),
  blockNumber: nonNegInt,
  blockHash: hashOrSig,
  blockTimestamp: unixSeconds,
  txHash: hashOrSig,
  logIndex: int32.nonnegative(),
  removed: z.boolean().default(false),
};

export const registryRecord = z.object({
  slug,
  status: z.enum(['active', 'disabled', 'coming_soon', 'hidden']),
  updatedAt: nonNegInt,
  vaultAddress: account,
  name: z.string(),
  symbol: z.string(),
  decimals: int32.min(0).max(36),
  chainIds: z.array(int32.positive()),
  solanaMint: z.string().default(''),
  baseAssetUsdPrice: decimalString,
  baseAssetDecimals: int32.min(0).max(36),
  info: z.string().refine((s) => {
    try {
      return typeof JSON.parse(s) === 'object';
    } catch {
      return false;
    }
  }, 'expected a JSON object'),
});

export const blockRecord = z.object({
  chainId: int32.positive(),
  blockNumber: nonNegInt,
  blockHash: hashOrSig,
  parentHash: hashOrSig,
  blockTimestamp: unixSeconds,
  removed: z.boolean().default(false),
});

export const transferRecord = z.object({
  ...chainFields,
  vault: slug,
  token: account,
  from: account,
  to: account,
  amount: uint256.refine((s) => BigInt(s) < 1n << 255n, 'transfer amount exceeds int256 balance arithmetic'),
});

export const ACTIVITY_KINDS = [
  'DEPOSIT',
  'WITHDRAW',
  'REDEEM_REQUEST',
  'INSTANT_REDEEM',
  'BRIDGE_IN',
  'BRIDGE_OUT',
] as const;
export const activityRecord = z.object({
  ...chainFields,
  vault: slug,
  kind: z.enum(ACTIVITY_KINDS),
  user: account,
  shares: uint256,
  sharesToken: account,
  assets: uint256,
  assetsToken: account,
  assetsDecimals: int32.min(0).max(36),
});

export const rateRecord = z.object({
  ...chainFields,
  vault: slug,
  accountant: account,
  rate: uint256,
  rateDecimals: int32.min(0).max(36),
  source: z.enum(['EVENT', 'READ']),
  isPaused: z.boolean().default(false),
});

export const FEE_KINDS = [
  'MANAGEMENT',
  'PERFORMANCE',
  'INSTANT_REDEMPTION',
  'DEPOSIT',
  'REDEMPTION',
  'CLAIMED',
] as const;
export const feeRecord = z.object({
  ...chainFields,
  vault: slug,
  kind: z.enum(FEE_KINDS),
  token: account,
  amount: uint256,
  decimals: int32.min(0).max(36),
  usdPrice: decimalString,
});

export const redemptionRecord = z.object({
  ...chainFields,
  vault: slug,
  queue: account,
  kind: z.enum(['REQUEST', 'FILL', 'CANCEL']),
  requestId: z.string().min(1).max(200),
  user: account,
  offerToken: account,
  wantToken: account,
  amount: uint256,
  minPrice: uint256,
  wantDecimals: int32.min(0).max(36),
  deadline: nonNegInt,
});

export const roleRecord = z.object({
  ...chainFields,
  vault: slug,
  authority: account,
  user: account,
  role: int32.min(0).max(255),
  enabled: z.boolean(),
});

/** ERC-7540 `OperatorSet` of the chain's OperatorRegistry (REGISTRY) or of a NestVault (VAULT). */
export const operatorRecord = z.object({
  ...chainFields,
  vault: slug,
  contract: account,
  source: z.enum(['REGISTRY', 'VAULT']),
  controller: account,
  operator: account,
  approved: z.boolean(),
});

export const FEE_RATE_KINDS = [
  'MANAGEMENT',
  'PLATFORM',
  'PERFORMANCE',
  'INSTANT_REDEMPTION',
  'DEPOSIT',
  'REDEMPTION',
] as const;
/** A fee-rate setting change; the rate is `newRate / rateScale` of the fee base, plus `newFlat` (NestVault). */
export const feeRateRecord = z.object({
  ...chainFields,
  vault: slug,
  contract: account,
  event: z.string().min(1).max(200),
  kind: z.enum(FEE_RATE_KINDS),
  oldRate: z.number().int().min(0).max(4_294_967_295),
  newRate: z.number().int().min(0).max(4_294_967_295),
  rateScale: z.union([z.literal(10_000), z.literal(1_000_000)]),
  oldFlat: uint256.default('0'),
  newFlat: uint256.default('0'),
});

export const SNAPSHOT_KINDS = [
  'SUPPLY',
  'ASSET_BALANCE',
  'ASSET_PRICE',
  'COMPOSITION',
  'ACCOUNTANT',
] as const;
export const snapshotRecord = z.object({
  vault: slug,
  chainId: int32.nonnegative(),
  blockNumber: nonNegInt,
  timestamp: unixSeconds,
  kind: z.enum(SNAPSHOT_KINDS),
  token: z.string().max(200).default(''),
  amount: uint256.default('0'),
  decimals: int32.min(0).max(36).default(0),
  usdPrice: optionalDecimal.default(''),
  apy7d: optionalDecimal.default(''),
  apy30d: optionalDecimal.default(''),
  weight: optionalDecimal.default(''),
  isPaused: z.boolean().default(false),
});

export const MINT_STEPS = [
  'solana',
  'cctpAttestation',
  'predicate',
  'relay',
  'composer',
  'oft',
  'solanaMint',
  'reclaim',
] as const;
export const STEP_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'skipped'] as const;
export const mintStepRecord = z.object({
  signature: base58,
  step: z.enum(MINT_STEPS),
  status: z.enum(STEP_STATUSES),
  observedAt: nonNegInt,
  fields: z.record(z.string(), z.string()).default({}),
  error: z.string().default(''),
});

export const sourceErrorRecord = z.object({
  vault: slug,
  chainId: int32.nonnegative().default(0),
  source: z.string().min(1),
  operation: z.string().min(1),
  message: z.string(),
  code: z.string().min(1),
  timestamp: unixSeconds,
});

export const deadLetterRecord = z.object({
  topic: z.string(),
  partition: int32,
  offset: z.string(),
  key: z.string(),
  reason: z.string(),
  payload: z.instanceof(Buffer),
  at: nonNegInt,
});

export type RegistryRecord = z.infer<typeof registryRecord>;
export type BlockRecord = z.infer<typeof blockRecord>;
export type TransferRecord = z.infer<typeof transferRecord>;
export type ActivityRecord = z.infer<typeof activityRecord>;
export type RateRecord = z.infer<typeof rateRecord>;
export type FeeRecord = z.infer<typeof feeRecord>;
export type RedemptionRecord = z.infer<typeof redemptionRecord>;
export type RoleRecord = z.infer<typeof roleRecord>;
export type OperatorRecord = z.infer<typeof operatorRecord>;
export type FeeRateRecord = z.infer<typeof feeRateRecord>;
export type SnapshotRecord = z.infer<typeof snapshotRecord>;
export type MintStepRecord = z.infer<typeof mintStepRecord>;
export type SourceErrorRecord = z.infer<typeof sourceErrorRecord>;
export type DeadLetterRecord = z.infer<typeof deadLetterRecord>;
