/**
 * The event families, one descriptor each (schemas/descriptor.ts): one topic per family,
 * with the partition key of docs/architecture.md, Events and partition keys, its fields'
 * kinds and columns, its raw table and its state flags. The zod schemas of
 * schemas/records.ts, the rows of streams/rows.ts and the fast paths all come from here.
 */
import { z } from 'zod';
import { usdE18 } from './columns.ts';
import { col, defineFamily } from './descriptor.ts';
import * as k from './kinds.ts';

/** The chain id every Solana record and row carries (the events' contract; EVM chains use their own ids). */
export const SOLANA_CHAIN_ID = 101;

export const ACTIVITY_KINDS = [
  'DEPOSIT',
  'WITHDRAW',
  'REDEEM_REQUEST',
  'INSTANT_REDEEM',
  'BRIDGE_IN',
  'BRIDGE_OUT',
] as const;
/**
 * A redemption record's kind: an AtomicQueue's REQUEST (the request with its new amount), FILL
 * (always whole) and CANCEL; an ERC-7540 vault's (NestVault) REDEEM_REQUEST (shares added to the
 * controller's pending request), REDEEM_FULFILLED (pending shares made claimable, with their
 * assets), REDEEM_DECREASED (pending shares taken off by updateRedeem) and REDEEM_CLAIMED
 * (claimable shares and assets paid out).
 */
export const REDEMPTION_KINDS = [
  'REQUEST',
  'FILL',
  'CANCEL',
  'REDEEM_REQUEST',
  'REDEEM_FULFILLED',
  'REDEEM_DECREASED',
  'REDEEM_CLAIMED',
] as const;
export const FEE_KINDS = [
  'MANAGEMENT',
  'PERFORMANCE',
  'INSTANT_REDEMPTION',
  'DEPOSIT',
  'REDEMPTION',
  'CLAIMED',
] as const;
export const FEE_RATE_KINDS = [
  'MANAGEMENT',
  'PLATFORM',
  'PERFORMANCE',
  'INSTANT_REDEMPTION',
  'DEPOSIT',
  'REDEMPTION',
] as const;
export const SNAPSHOT_KINDS = [
  'SUPPLY',
  'ASSET_BALANCE',
  'ASSET_PRICE',
  'COMPOSITION',
  'ACCOUNTANT',
] as const;
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

/** Where a chain event happened, and whether a reorg retracted it: the fields every chain event starts with. */
const CHAIN = {
  chainId: k.positiveInt32,
  blockNumber: k.nonNegLong,
  blockHash: k.hashOrSig,
  blockTimestamp: col(k.unixSeconds, 'block_time'),
  txHash: k.hashOrSig,
  logIndex: k.nonNegInt32,
  removed: k.withDefault(k.flag, false),
};
/** Chain events: keyed by vault, identified by `event_id`, versioned. */
const EVENT = { key: (rec: { vault: string }) => rec.vault, event: true, versioned: true } as const;

const registry = defineFamily({
  name: 'registry',
  table: 'registry_raw',
  key: (rec) => rec.slug,
  fields: {
    slug: k.slug,
    status: k.oneOf(['active', 'disabled', 'coming_soon', 'hidden']),
    updatedAt: k.plain(z.number().int().nonnegative(), 'iso'),
    vaultAddress: k.account,
    name: k.plain(z.string()),
    symbol: k.plain(z.string()),
    decimals: k.decimals,
    chainIds: k.plain(z.array(k.positiveInt32.zod)),
    solanaMint: k.plain(z.string().default('')),
    baseAssetUsdPrice: k.decimalString,
    baseAssetDecimals: k.decimals,
    info: k.plain(
      z.string().refine((s) => {
        try {
          return typeof JSON.parse(s) === 'object';
        } catch {
          return false;
        }
      }, 'expected a JSON object'),
    ),
  },
});

const blocks = defineFamily({
  name: 'blocks',
  table: 'blocks_raw',
  key: (rec) => String(rec.chainId),
  versioned: true,
  fast: true,
  fields: {
    chainId: k.positiveInt32,
    blockNumber: k.nonNegLong,
    blockHash: k.hashOrSig,
    parentHash: k.hashOrSig,
    blockTimestamp: col(k.unixSeconds, 'block_time'),
    removed: k.withDefault(k.flag, false),
  },
});

const transfers = defineFamily({
  name: 'transfers',
  table: 'transfers_raw',
  ...EVENT,
  stateChecked: true,
  fast: true,
  transcode: true,
  fields: {
    ...CHAIN,
    vault: k.slug,
    token: k.account,
    from: col(k.account, 'from_address'),
    to: col(k.account, 'to_address'),
    amount: k.uintAtMost((1n << 255n) - 1n, 'transfer amount exceeds int256 balance arithmetic'),
    transactionIndex: k.withDefault(k.int(-1, 2147483647), -1),
  },
});

const activity = defineFamily({
  name: 'activity',
  table: 'activity_raw',
  ...EVENT,
  fast: true,
  fields: {
    ...CHAIN,
    vault: k.slug,
    kind: k.oneOf(ACTIVITY_KINDS),
    user: k.account,
    shares: k.uint256,
    sharesToken: k.account,
    assets: k.uint256,
    assetsToken: k.account,
    assetsDecimals: k.decimals,
  },
});

const rates = defineFamily({
  name: 'rates',
  table: 'rates_raw',
  ...EVENT,
  fast: true,
  fields: {
    ...CHAIN,
    vault: k.slug,
    accountant: k.account,
    rate: k.uint256,
    rateDecimals: k.decimals,
    source: k.oneOf(['EVENT', 'READ']),
    isPaused: k.withDefault(k.flag, false),
  },
});

const fees = defineFamily({
  name: 'fees',
  table: 'fees_raw',
  ...EVENT,
  stateChecked: true,
  fields: {
    ...CHAIN,
    vault: k.slug,
    kind: k.oneOf(FEE_KINDS),
    token: k.account,
    amount: k.uint256,
    decimals: k.decimals,
    usdPrice: k.decimalString,
  },
  derived: { usd_e18: (r) => usdE18(r.amount, r.decimals, r.usdPrice).toString() },
});

const redemptions = defineFamily({
  name: 'redemptions',
  table: 'redemptions_raw',
  ...EVENT,
  fields: {
    ...CHAIN,
    vault: k.slug,
    queue: k.account,
    kind: k.oneOf(REDEMPTION_KINDS),
    requestId: k.plain(z.string().min(1).max(200), 'norm'),
    user: k.account,
    offerToken: k.account,
    wantToken: k.account,
    amount: k.uint256,
    minPrice: k.uint256,
    wantDecimals: k.decimals,
    deadline: k.plain(z.number().int().nonnegative(), 'time'),
    assets: k.withDefault(k.uint256, '0'),
  },
});

const roles = defineFamily({
  name: 'roles',
  table: 'roles_raw',
  ...EVENT,
  fields: {
    ...CHAIN,
    vault: k.slug,
    authority: k.account,
    user: k.account,
    role: k.int(0, 255),
    enabled: k.flag,
  },
});

/** ERC-7540 `OperatorSet` of the chain's OperatorRegistry (REGISTRY) or of a NestVault (VAULT). */
const operators = defineFamily({
  name: 'operators',
  table: 'operators_raw',
  ...EVENT,
  fields: {
    ...CHAIN,
    vault: k.slug,
    contract: k.account,
    source: k.oneOf(['REGISTRY', 'VAULT']),
    controller: k.account,
    operator: k.account,
    approved: k.flag,
  },
});

/** A fee-rate setting change; the rate is `newRate / rateScale` of the fee base, plus `newFlat` (NestVault). */
const fee_rates = defineFamily({
  name: 'fee_rates',
  table: 'fee_rates_raw',
  ...EVENT,
  fields: {
    ...CHAIN,
    vault: k.slug,
    contract: k.account,
    event: k.plain(z.string().min(1).max(200)),
    kind: k.oneOf(FEE_RATE_KINDS),
    oldRate: k.int(0, 4_294_967_295, 'long'),
    newRate: k.int(0, 4_294_967_295, 'long'),
    rateScale: k.plain(z.union([z.literal(10_000), z.literal(1_000_000)])),
    oldFlat: k.withDefault(k.uint256, '0'),
    newFlat: k.withDefault(k.uint256, '0'),
  },
});

const snapshots = defineFamily({
  name: 'snapshots',
  table: 'snapshots_raw',
  key: (rec) => rec.vault,
  fields: {
    vault: k.slug,
    chainId: k.nonNegInt32,
    blockNumber: k.nonNegLong,
    timestamp: col(k.unixSeconds, 'ts'),
    kind: k.oneOf(SNAPSHOT_KINDS),
    token: k.plain(z.string().max(200).default(''), 'norm'),
    amount: k.withDefault(k.uint256, '0'),
    decimals: k.withDefault(k.decimals, 0),
    usdPrice: k.optionalDecimal,
    apy7d: k.optionalDecimal,
    apy30d: k.optionalDecimal,
    weight: k.optionalDecimal,
    isPaused: k.withDefault(k.flag, false),
  },
});

const mint_steps = defineFamily({
  name: 'mint_steps',
  table: 'mint_steps_raw',
  key: (rec) => rec.signature,
  fields: {
    signature: k.base58,
    step: k.oneOf(MINT_STEPS),
    status: k.oneOf(STEP_STATUSES),
    observedAt: k.plain(z.number().int().nonnegative(), 'iso'),
    fields: k.plain(z.record(z.string(), z.string()).default({})),
    error: k.plain(z.string().default('')),
  },
});

const source_errors = defineFamily({
  name: 'source_errors',
  table: 'source_errors_raw',
  key: (rec) => rec.vault,
  fields: {
    vault: k.slug,
    chainId: k.withDefault(k.nonNegInt32, 0),
    source: k.plain(z.string().min(1)),
    operation: k.plain(z.string().min(1)),
    message: k.plain(z.string()),
    code: k.plain(z.string().min(1)),
    timestamp: col(k.unixSeconds, 'ts'),
  },
});

const dlq = defineFamily({
  name: 'dlq',
  table: 'dead_letters',
  key: (rec) => rec.topic,
  fields: {
    topic: k.plain(z.string()),
    partition: k.int32,
    offset: k.plain(z.string()),
    key: k.plain(z.string()),
    reason: k.plain(z.string()),
    payload: k.plain(z.instanceof(Buffer), 'base64'),
    at: k.plain(z.number().int().nonnegative(), 'iso'),
  },
});

export const FAMILIES = {
  registry,
  blocks,
  transfers,
  activity,
  rates,
  fees,
  redemptions,
  roles,
  operators,
  fee_rates,
  snapshots,
  mint_steps,
  source_errors,
  dlq,
} as const;

export type FamilyName = keyof typeof FAMILIES;
/** A family's descriptor. */
export type Family<F extends FamilyName = FamilyName> = (typeof FAMILIES)[F];
/** A family's record as validated (zod's output: defaults filled in). */
export type Valid<F extends FamilyName> = z.output<Family<F>['schema']>;
/** A family's record as a producer writes it (fields with an Avro default may be left out: the codec fills them). */
export type Publishable<F extends FamilyName> = z.input<Family<F>['schema']>;

/** Families that carry data into tables (every family but the dead-letter topic). */
export const DATA_FAMILIES = (Object.keys(FAMILIES) as FamilyName[]).filter((f) => f !== 'dlq');

export function isFamily(name: string): name is FamilyName {
  return Object.hasOwn(FAMILIES, name);
}
