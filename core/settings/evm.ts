/**
 * Settings of EVM ingestion (`ingest` in the config file) and the per-chain fields
 * beyond the basics (`chains[]`). Owned by the EVM ingest role; validated once at
 * start with the rest of the config (core/config.ts).
 */
import { z } from 'zod';

const address = z.string().regex(/^0x[a-fA-F0-9]{40}$/, 'expected a 0x-prefixed 20-byte hex address');
const maybeAddress = z.union([address, z.literal('')]).default('');

/** Extra per-chain fields, merged into `chains[]`. */
export const chainExtrasShape = {
  /** Block explorer base URL (links are `<explorerUrl>/tx/<hash>`); empty = none. */
  explorerUrl: z.string().default(''),
  /** ERC-7540 operator registry of the chain (auto-claim build-tx). */
  operatorRegistry: maybeAddress,
  /** Redeem operator the auto-claim build-tx enables or disables. */
  redeemOperator: maybeAddress,
  /** Multicall3 address (the canonical CREATE2 address by default). */
  multicall3: address.default('0xcA11bde05977b3631167028862bE2a173976CA11'),
  /** Largest eth_getLogs block range asked for; halved on provider range errors. */
  maxBlockRange: z.number().int().min(1).max(1_000_000).default(2000),
  /** Per-request RPC timeout. */
  requestTimeoutMs: z.number().int().min(100).max(300_000).default(10_000),
};

/** `ingest`: how the EVM ingesters follow their chains. */
export const ingestSchema = z
  .object({
    /** State snapshots (supply, accountant, liquid assets, queue) every N seconds, and at every UTC day boundary. */
    snapshotIntervalSeconds: z.number().int().min(1).max(86_400).default(300),
  })
  .prefault({});
