/**
 * The event families: one topic each, with the partition key of docs/architecture.md, Events and partition keys
 * and the zod schema that validates a decoded record.
 */

import type { z } from 'zod';
import * as r from './records.ts';

/** The chain id every Solana record and row carries (the events' contract; EVM chains use their own ids). */
export const SOLANA_CHAIN_ID = 101;

export interface FamilyDef<S extends z.ZodType = z.ZodType> {
  /** Topic suffix and Avro file stem. */
  name: string;
  schema: S;
  /** Partition key of a record. */
  key(record: z.infer<S>): string;
}

function family<S extends z.ZodType>(
  name: string,
  schema: S,
  key: (rec: z.infer<S>) => string,
): FamilyDef<S> {
  return { name, schema, key };
}

const byVault = (rec: { vault: string }) => rec.vault;

export const FAMILIES = {
  registry: family('registry', r.registryRecord, (rec) => rec.slug),
  blocks: family('blocks', r.blockRecord, (rec) => String(rec.chainId)),
  transfers: family('transfers', r.transferRecord, byVault),
  activity: family('activity', r.activityRecord, byVault),
  rates: family('rates', r.rateRecord, byVault),
  fees: family('fees', r.feeRecord, byVault),
  redemptions: family('redemptions', r.redemptionRecord, byVault),
  roles: family('roles', r.roleRecord, byVault),
  operators: family('operators', r.operatorRecord, byVault),
  fee_rates: family('fee_rates', r.feeRateRecord, byVault),
  snapshots: family('snapshots', r.snapshotRecord, byVault),
  mint_steps: family('mint_steps', r.mintStepRecord, (rec) => rec.signature),
  source_errors: family('source_errors', r.sourceErrorRecord, byVault),
  dlq: family('dlq', r.deadLetterRecord, (rec) => rec.topic),
} as const;

export type FamilyName = keyof typeof FAMILIES;
/** Families that carry data into tables (every family but the dead-letter topic). */
export const DATA_FAMILIES = (Object.keys(FAMILIES) as FamilyName[]).filter((f) => f !== 'dlq');

export function isFamily(name: string): name is FamilyName {
  return Object.hasOwn(FAMILIES, name);
}
