/**
 * Settings of Solana ingestion and the mint-flow tracker (`solana` and `mintFlow`
 * in the config file). Owned by the Solana role; validated once at start with the
 * rest of the config (core/config.ts).
 */
import { z } from 'zod';

/** `solana`: the Solana JSON-RPC endpoints and explorer. */
export const solanaSchema = z
  .object({
    /** JSON-RPC URLs, first preferred; empty = Solana ingestion off. */
    rpcUrls: z.array(z.string().url()).default([]),
    pollIntervalMs: z.number().int().positive().default(4000),
    /** Solana explorer base URL (links are `<explorerUrl>/tx/<signature>`). */
    explorerUrl: z.string().default('https://solscan.io'),
  })
  .prefault({});

/** `mintFlow`: the HTTP services the mint-flow tracker reads. */
export const mintFlowSchema = z
  .object({
    /** Circle Iris attestation service base URL. */
    attestationUrl: z.string().default('https://iris-api.circle.com'),
    /** Compliance (Predicate) service base URL. */
    complianceUrl: z.string().default('https://api.predicate.io'),
    /** LayerZero scan API base URL. */
    crossChainScanUrl: z.string().default('https://scan.layerzero-api.com/v1'),
    /** LayerZero scan web base URL (links are `<crossChainScanExplorerUrl>/tx/<hash>`). */
    crossChainScanExplorerUrl: z.string().default('https://layerzeroscan.com'),
    pollIntervalMs: z.number().int().positive().default(5000),
  })
  .prefault({});
