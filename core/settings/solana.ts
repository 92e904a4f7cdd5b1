/**
 * Settings of Solana ingestion and the mint-flow tracker (`solana` and `mintFlow`
 * in the config file). Owned by the Solana role; validated once at start with the
 * rest of the config (core/config.ts).
 */
import { z } from 'zod';
import { retryShape } from './retry.ts';

const base58 = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'expected a base58 Solana address');
const evmAddress = z.string().regex(/^0x[a-fA-F0-9]{40}$/, 'expected a 0x-prefixed 20-byte hex address');

/** `solana`: the Solana JSON-RPC endpoints and explorer. */
export const solanaSchema = z
  .object({
    rpcUrls: z
      .array(z.string().url())
      .default([])
      .describe('JSON-RPC URLs, first preferred, the rest fallbacks; empty = Solana ingestion off.'),
    pollIntervalMs: z
      .number()
      .int()
      .positive()
      .default(4000)
      .describe("Rounds' interval without an account subscription (with one, `subscribedPollIntervalMs`)."),
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
    explorerUrl: z
      .string()
      .default('https://solscan.io')
      .describe('Solana explorer base URL (links are `<explorerUrl>/tx/<signature>`).'),
    commitment: z
      .enum(['confirmed', 'finalized'])
      .default('finalized')
      .describe(
        'Commitment of every read: `confirmed` blocks do not roll back in practice, `finalized` never.',
      ),
    requestTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(300_000)
      .default(10_000)
      .describe(
        'Per-request timeout; for the full account read, the longest wait for the next part of the answer.',
      ),
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
    ...retryShape({
      attempts: 'Attempts per request across the URLs (timeouts, 429, 5xx) before the round gives up.',
      maxAttempts: 4,
      backoffMs: 500,
      minBackoffMs: 0,
    }),
    pageLimit: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(1000)
      .describe('Signatures per getSignaturesForAddress page (the RPC allows at most 1000).'),
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
    attestationUrl: z
      .string()
      .default('https://iris-api.circle.com')
      .describe('Circle Iris attestation service base URL.'),
    complianceUrl: z
      .string()
      .default('https://api.predicate.io')
      .describe('Compliance (Predicate) service base URL.'),
    complianceApiKey: z.string().default('').describe('Compliance API key (`x-api-key`); empty = none sent.'),
    crossChainScanUrl: z
      .string()
      .default('https://scan.layerzero-api.com/v1')
      .describe('LayerZero scan API base URL.'),
    crossChainScanExplorerUrl: z
      .string()
      .default('https://layerzeroscan.com')
      .describe('LayerZero scan web base URL (links are `<crossChainScanExplorerUrl>/tx/<hash>`).'),
    pollIntervalMs: z
      .number()
      .int()
      .positive()
      .default(5000)
      .describe('Pause between two rounds of the mint-flow tracker.'),
    requestTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(300_000)
      .default(10_000)
      .describe('Per-request timeout of the HTTP services.'),
    primaryChainId: z
      .number()
      .int()
      .positive()
      .default(98866)
      .describe('The EVM chain the flow lands on (its RPC and explorer come from `chains[]`).'),
    sourceDomain: z
      .number()
      .int()
      .nonnegative()
      .default(5)
      .describe("CCTP domain of Solana (the burn's source)."),
    destinationDomain: z
      .number()
      .int()
      .nonnegative()
      .default(22)
      .describe('CCTP domain of the primary chain.'),
    solanaEid: z
      .number()
      .int()
      .positive()
      .default(30168)
      .describe("LayerZero endpoint id of Solana (the share OFT's destination)."),
    cctpPrograms: z
      .array(base58)
      .default(['CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe'])
      .describe('Solana CCTP programs whose burns start a flow (TokenMessengerMinterV2).'),
    solanaOftProgramId: base58
      .default('ChEfPd3RzLeYiRwp1K9evimmaFSd6DV1S4Mv5q5Aj1th')
      .describe('The Solana OFT program that mints the shares back.'),
    relayerAddress: z
      .union([evmAddress, z.literal('')])
      .default('')
      .describe(
        'NestCCTPRelayer on the primary chain (HookRelayed / HookFailed / Refunded); empty = not read.',
      ),
    stepTimeoutsMs: stepLimits.describe('Longest wait per step before it is `failed`.'),
    lookupWaitMs: z
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(5000)
      .describe("How long an on-demand lookup waits for the flow's first observations to land in the views."),
  })
  .prefault({});
