/**
 * Settings of EVM ingestion (`ingest` in the config file) and the per-chain fields
 * beyond the basics (`chains[]`). Owned by the EVM ingest role; validated once at
 * start with the rest of the config (core/config.ts).
 */
import { z } from 'zod';
import { retryShape } from './retry.ts';

const address = z.string().regex(/^0x[a-fA-F0-9]{40}$/, 'expected a 0x-prefixed 20-byte hex address');
const maybeAddress = z.union([address, z.literal('')]).default('');

/** The legacy Nucleus teller PredicateProxy (the same address on every chain). */
export const LEGACY_PREDICATE_PROXY = '0x6104fe10ca937a086ba7AdbD0910A4733d380cB6';

/** Extra per-chain fields, merged into `chains[]`. */
export const chainExtrasShape = {
  explorerUrl: z
    .string()
    .default('')
    .describe('Block explorer base URL (links are `<explorerUrl>/tx/<hash>`); empty = none.'),
  operatorRegistry: maybeAddress.describe('ERC-7540 operator registry of the chain (auto-claim build-tx).'),
  redeemOperator: maybeAddress.describe('Redeem operator the auto-claim build-tx enables or disables.'),
  multicall3: address
    .default('0xcA11bde05977b3631167028862bE2a173976CA11')
    .describe('Multicall3 address (the canonical CREATE2 address by default).'),
  maxBlockRange: z
    .number()
    .int()
    .min(1)
    .max(1_000_000_000)
    .default(2000)
    .describe('Largest eth_getLogs block range asked for; halved on provider range errors.'),
  reorgWindow: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(64)
    .describe(
      "Newest ingested blocks kept with their hashes and published records (in the checkpoint), so a reorg up to this depth is retracted exactly; a deeper one stops the chain (`phase: 'stopped'`). Independent of `confirmations`.",
    ),
  maxRequestsPerSecond: z
    .union([z.literal('auto'), z.number().min(0).max(100_000)])
    .default('auto')
    .describe(
      "RPC requests started per second at most on this chain (a JSON-RPC batch is one request), for every EVM client of the service; 0 = no limit. `auto`: no limit for a URL on this machine or a private network (a loopback or private address, `localhost`, a one-label name such as `http://geth:8545`, `.local`, `.internal`); any other URL starts at 25 a second, what public endpoints take, goes faster while its requests wait for the pace and it refuses none as over its rate (HTTP 429, -32005), and back down, never below 25, when it does (rpc/request-limiter.ts). A number is a fixed limit, e.g. a paid plan's.",
    ),
  maxConcurrentRequests: z
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(4)
    .describe('RPC requests in flight at most on this chain, per client.'),
  requestTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(300_000)
    .default(10_000)
    .describe('Per-request RPC timeout.'),
  atomicQueues: z
    .array(address)
    .default([])
    .describe(
      "AtomicQueue contracts of the chain. One queue serves every vault: a request's `offerToken` (the share) tells which vault it belongs to.",
    ),
  predicateProxies: z
    .array(address)
    .default([LEGACY_PREDICATE_PROXY])
    .describe(
      'Deposit proxies that call `teller.deposit` and then transfer the shares on: a teller `Deposit` whose receiver is one of these takes its user from the share `Transfer(proxy -> user)` of the same transaction.',
    ),
};

/** `ingest`: how the EVM ingesters follow their chains. */
export const ingestSchema = z
  .object({
    snapshotIntervalSeconds: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(300)
      .describe(
        'State snapshots (supply, accountant, liquid assets, queue) every N seconds, and at every UTC day boundary.',
      ),
    ...retryShape({
      attempts:
        "Attempts per RPC request in all, across the chain's `rpcUrls`, before the round fails; refusals as over a provider's rate (HTTP 429, -32005) do not count, up to four times as many (rpc/evm-transport.ts `RATE_LIMITED_ATTEMPTS`). These retry settings (`maxAttempts`, `backoffMs`, `maxBackoffMs`, `jitter`) apply to every EVM RPC client of the service (rpc/evm-transport.ts): the ingester, the mint-flow tracker, live liquidity and build-tx (whose requests also stop at `api.buildTx.timeoutMs`).",
      maxAttempts: 5,
      backoffMs: 250,
      minBackoffMs: 1,
    }),
    headerBatchSize: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(100)
      .describe(
        "Calls in one JSON-RPC batch: block headers, and the snapshot reads of a backfill's day closes.",
      ),
    progressLogIntervalMs: z
      .number()
      .int()
      .min(100)
      .max(3_600_000)
      .default(10_000)
      .describe('Log backfill progress at most this often.'),
    live: z
      .object({
        maxLagBlocks: z.number().int().min(0).max(1_000_000).default(200),
        maxLagSeconds: z.number().int().min(1).max(86_400).default(60),
      })
      .prefault({})
      .describe(
        'A chain that has caught up stays `live` (and `/readyz` ready) while it is at most `maxLagBlocks` behind its head and was last caught up at most `maxLagSeconds` ago: new blocks not yet read between two polls are not a return to backfill (ingest/evm/progress.ts).',
      ),
  })
  .prefault({});
