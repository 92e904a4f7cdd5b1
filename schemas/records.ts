/**
 * The zod schema and TypeScript type of every event family's record, as its descriptor
 * (schemas/families.ts) defines them. The Avro schemas in `schemas/avro/` define the wire
 * shape; the descriptors mirror them field for field (test/unit/descriptor.test.ts holds
 * them together) and add what Avro cannot say: hex patterns, uint256 ranges, enum membership.
 */
import type { z } from 'zod';
import { FAMILIES } from './families.ts';

export const registryRecord = FAMILIES.registry.schema;
export const blockRecord = FAMILIES.blocks.schema;
export const transferRecord = FAMILIES.transfers.schema;
export const activityRecord = FAMILIES.activity.schema;
export const rateRecord = FAMILIES.rates.schema;
export const feeRecord = FAMILIES.fees.schema;
export const redemptionRecord = FAMILIES.redemptions.schema;
export const roleRecord = FAMILIES.roles.schema;
export const operatorRecord = FAMILIES.operators.schema;
export const feeRateRecord = FAMILIES.fee_rates.schema;
export const snapshotRecord = FAMILIES.snapshots.schema;
export const mintStepRecord = FAMILIES.mint_steps.schema;
export const sourceErrorRecord = FAMILIES.source_errors.schema;
export const deadLetterRecord = FAMILIES.dlq.schema;

export type RegistryRecord = z.infer<typeof registryRecord>;
export type BlockRecord = z.infer<typeof blockRecord>;
/**
 * A transfer as producers write it: `transactionIndex` (added in transfers.v2) may be left
 * out, and the codec writes its Avro default, -1 (Solana transfers do so). The consumer
 * validates to `Valid<'transfers'>`, where it is always present.
 */
export type TransferRecord = Omit<z.infer<typeof transferRecord>, 'transactionIndex'> &
  Partial<Pick<z.infer<typeof transferRecord>, 'transactionIndex'>>;
export type ActivityRecord = z.infer<typeof activityRecord>;
export type RateRecord = z.infer<typeof rateRecord>;
export type FeeRecord = z.infer<typeof feeRecord>;
/**
 * A redemption as producers write it: `assets` (added in redemptions.v2, for the ERC-7540
 * kinds) may be left out, and the codec writes its Avro default, '0'.
 */
export type RedemptionRecord = Omit<z.infer<typeof redemptionRecord>, 'assets'> &
  Partial<Pick<z.infer<typeof redemptionRecord>, 'assets'>>;
export type RoleRecord = z.infer<typeof roleRecord>;
export type OperatorRecord = z.infer<typeof operatorRecord>;
export type FeeRateRecord = z.infer<typeof feeRateRecord>;
export type SnapshotRecord = z.infer<typeof snapshotRecord>;
export type MintStepRecord = z.infer<typeof mintStepRecord>;
export type SourceErrorRecord = z.infer<typeof sourceErrorRecord>;
export type DeadLetterRecord = z.infer<typeof deadLetterRecord>;
