/**
 * Settings of Solana ingestion and the mint-flow tracker (`solana` and `mintFlow`
 * in the config file). Owned by the Solana role; validated once at start with the
 * rest of the config (core/config.ts).
 */
import { z } from 'zod';

const base58 = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'expected a base58 Solana address');
const evmAddress = z.string().regex(/^0x[a-fA-F0-9]{40}$/, 'expected a 0x-prefixed 20-byte hex address');

/** `solana`: the Solana JSON-RPC endpoints and explorer. */
export const solanaSchema = z
  .object({
    /** JSON-RPC URLs, first preferred, the rest fallbacks; empty = Solana ingestion off. */
    rpcUrls: z.array(z.string().url()).default([]),
    /** Rounds' interval without an account subscription (with one, `subscribedPollIntervalMs`). */
    pollIntervalMs: z.number().int().positive().default(4000),
    wsUrls: z
      .array(z.string().url())
      .default([])
      .describe(
        'Websocket URLs of the account subscription (programSubscribe), first preferred; empty = each RPC URL with ws(s) for http(s)',
      ),
    subscribe: z
      .boolean()
      .default(true)
      .describe(
        "Subscribe to the mint's token accounts (programSubscribe) to see every change, plain SPL Transfers included, as it happens; false = full re-reads on unsubscribedReconcileIntervalMs",
      ),
    subscribedPollIntervalMs: z
      .number()
      .int()
      .positive()
      .default(15_000)
      .describe(
        'Rounds interval while the subscription is up: a change notified wakes a round at once, so idle rounds only move the watermark',
      ),
    /** Solana explorer base URL (links are `<explorerUrl>/tx/<signature>`). */
    explorerUrl: z.string().default('https://solscan.io'),
    /** Commitment of every read: `confirmed` blocks do not roll back in practice, `finalized` never. */
    commitment: z.enum(['confirmed', 'finalized']).default('finalized'),
    /** Per-request timeout; for the full account read, the longest wait for the next part of the answer. */
    requestTimeoutMs: z.number().int().min(100).max(300_000).default(10_000),
    maxRequestsPerSecond: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Requests started per second at most, a JSON-RPC batch counting as one; 0 = no limit'),
    maxConcurrentRequests: z
      .number()
      .int()
      .min(1)
      .default(4)
      .describe('Requests in flight at most (getTransaction batches run this many at once)'),
    transactionBatchSize: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(50)
      .describe('getTransaction calls per JSON-RPC batch'),
    historySignatures: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe(
        "The mint's past transactions read at the opening, newest first, so the holder history has the days before the first run; 0 = the opening balances only, at the opening slot",
      ),
    /** Attempts per request across the URLs (timeouts, 429, 5xx) before the round gives up. */
    maxAttempts: z.number().int().min(1).max(20).default(4),
    /** First retry delay; doubles on each attempt. */
    backoffMs: z.number().int().min(0).max(60_000).default(500),
    /** Longest retry delay (new; the delays doubled without bound before). */
    maxBackoffMs: z.number().int().min(0).max(600_000).default(10_000),
    /** Share of each retry delay taken off at random, 0..1 (new; core/retry.ts). */
    jitter: z.number().min(0).max(1).default(0.5),
    /** Signatures per getSignaturesForAddress page (the RPC allows at most 1000). */
    pageLimit: z.number().int().min(1).max(1000).default(1000),
    reconcileIntervalMs: z
      .number()
      .int()
      .min(0)
      .default(6 * 3_600_000)
      .describe(
        "How often a full read of the mint's token accounts, checked against the supply, corrects the state while the subscription is up (a safety net); 0 = off",
      ),
    unsubscribedReconcileIntervalMs: z
      .number()
      .int()
      .min(0)
      .default(10 * 60_000)
      .describe(
        'The full re-read interval without a subscription (plain SPL Transfers never list the mint, so only a re-read sees them); 0 = off',
      ),
  })
  .prefault({});

/** The mint-flow steps that can time out, with their limits in ms (from the previous step's completion). */
const stepLimits = z
  .object({
    cctpAttestation: z
      .number()
      .int()
      .positive()
      .default(30 * 60_000),
    predicate: z
      .number()
      .int()
      .positive()
      .default(30 * 60_000),
    relay: z
      .number()
      .int()
      .positive()
      .default(60 * 60_000),
    composer: z
      .number()
      .int()
      .positive()
      .default(30 * 60_000),
    oft: z
      .number()
      .int()
      .positive()
      .default(30 * 60_000),
    solanaMint: z
      .number()
      .int()
      .positive()
      .default(60 * 60_000),
    reclaim: z
      .number()
      .int()
      .positive()
      .default(24 * 60 * 60_000),
  })
  .prefault({});

/** `mintFlow`: the HTTP services and contracts the mint-flow tracker reads. */
export const mintFlowSchema = z
  .object({
    /** Circle Iris attestation service base URL. */
    attestationUrl: z.string().default('https://iris-api.circle.com'),
    /** Compliance (Predicate) service base URL. */
    complianceUrl: z.string().default('https://api.predicate.io'),
    /** Compliance API key (`x-api-key`); empty = none sent. */
    complianceApiKey: z.string().default(''),
    /** LayerZero scan API base URL. */
    crossChainScanUrl: z.string().default('https://scan.layerzero-api.com/v1'),
    /** LayerZero scan web base URL (links are `<crossChainScanExplorerUrl>/tx/<hash>`). */
    crossChainScanExplorerUrl: z.string().default('https://layerzeroscan.com'),
    pollIntervalMs: z.number().int().positive().default(5000),
    /** Per-request timeout of the HTTP services. */
    requestTimeoutMs: z.number().int().min(100).max(300_000).default(10_000),
    /** The EVM chain the flow lands on (its RPC and explorer come from `chains[]`). */
    primaryChainId: z.number().int().positive().default(98866),
    /** CCTP domain of Solana (the burn's source). */
    sourceDomain: z.number().int().nonnegative().default(5),
    /** CCTP domain of the primary chain. */
    destinationDomain: z.number().int().nonnegative().default(22),
    /** LayerZero endpoint id of Solana (the share OFT's destination). */
    solanaEid: z.number().int().positive().default(30168),
    /** Solana CCTP programs whose burns start a flow (TokenMessengerMinterV2). */
    cctpPrograms: z.array(base58).default(['CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe']),
    /** The Solana OFT program that mints the shares back. */
    solanaOftProgramId: base58.default('ChEfPd3RzLeYiRwp1K9evimmaFSd6DV1S4Mv5q5Aj1th'),
    /** NestCCTPRelayer on the primary chain (HookRelayed / HookFailed / Refunded); empty = not read. */
    relayerAddress: z.union([evmAddress, z.literal('')]).default(''),
    /** Longest wait per step before it is `failed`. */
    stepTimeoutsMs: stepLimits,
    /** How long an on-demand lookup waits for the flow's first observations to land in the views. */
    lookupWaitMs: z.number().int().min(0).max(60_000).default(5000),
  })
  .prefault({});
