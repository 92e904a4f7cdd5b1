/**
 * Response schemas of every endpoint, exactly as the spec shapes them, with the
 * units and formulas of docs/architecture.md, Units and formulas in their descriptions. They feed the
 * OpenAPI document and let tests check a response's shape (`schema.parse(body)`).
 */
import { z } from 'zod';
import {
  apyBlock,
  COMPOSITION_APY,
  failedRedemption,
  feeSeriesPoint,
  HOLDERS,
  holderHistoryEntry,
  NAV_APY,
  named,
  percent,
  recentTransaction,
  roleAssignment,
  SETTLED,
  tokenHolder,
  topHolder,
  tvl,
  unixSeconds,
  usd,
  vaultDetails,
  vaultDetailsLite,
  vaultInfo,
} from './resources.ts';

const stepStatus = {
  status: z.string().meta({ description: 'pending, in_progress, completed, failed or skipped.' }),
  statusCode: z.number().int().meta({ description: '0..4 in the order of `status`.' }),
};
const step = <T extends z.ZodRawShape>(fields: T) => z.object({ ...stepStatus, ...fields });
const at = (name: string) => ({ [name]: z.number().int(), [`${name}Formatted`]: z.string() });

export const mintStatus = named(
  'MintStatus',
  z.object({
    solanaSignature: z.string(),
    solanaWallet: z.string(),
    amount: z.string(),
    progress: z.string().meta({
      description: '"completed steps/applicable steps", e.g. "5/7"; `reclaim` only applies on refund.',
    }),
    overallStatus: z.string().meta({ description: 'pending, processing, completed, failed or refunded.' }),
    overallStatusCode: z.number().int().meta({ description: '0..4 in the order of `overallStatus`.' }),
    ...at('createdAt'),
    ...at('updatedAt'),
    steps: z.object({
      solana: step({
        ...at('blockTimestamp'),
        blockSlot: z.string(),
        ...at('indexedAt'),
        composerAddress: z.string(),
      }),
      cctpAttestation: step({
        nonce: z.string(),
        ...at('attestedAt'),
        attestationServiceStatus: z.string(),
        sourceDomain: z.number().int(),
        destinationDomain: z.number().int(),
      }),
      predicate: step({
        taskId: z.string(),
        isCompliant: z.boolean(),
        ...at('checkedAt'),
        error: z.string().optional(),
      }),
      relay: step({
        txHash: z.string(),
        blockNumber: z.string(),
        ...at('blockTimestamp'),
        gasUsed: z.string(),
        error: z.string().optional(),
      }),
      composer: step({ assetAmount: z.string(), shareAmount: z.string() }),
      oft: step({
        lzGuid: z.string(),
        dstEid: z.number().int(),
        amountSent: z.string(),
        amountReceived: z.string(),
      }),
      solanaMint: step({
        signature: z.string(),
        ...at('blockTimestamp'),
        blockSlot: z.string(),
        programId: z.string(),
        oftstoreAddress: z.string(),
      }),
      reclaim: step({ txHash: z.string(), ...at('blockTimestamp') }),
    }),
    error: z.object({ code: z.string(), message: z.string() }),
    links: z.object({
      solanaExplorer: z.string(),
      primaryExplorer: z.string(),
      crossChainScan: z.string(),
      solanaMintTransaction: z.string(),
    }),
  }),
);

const historyVault = z.object({
  price: z.number().meta({ description: "Close share price in the vault's base asset." }),
  tvl,
  liquidFunds: usd('Liquid funds'),
  apy: apyBlock
    .nullable()
    .meta({ description: `compositionApy; null for the current, unsettled day. ${SETTLED}` }),
  navApy: apyBlock
    .nullable()
    .meta({ description: `navApy; null for the current, unsettled day. ${SETTLED}` }),
});
export const performanceHistory = named(
  'PerformanceHistory',
  z.object({
    vaultAddress: z.string(),
    assets: z.array(z.object({ slug: z.string(), name: z.string() })),
    history: z.array(
      z.object({
        day: unixSeconds('Start of the UTC day'),
        settled: z.boolean().meta({
          description: `true: the day is settled, its numbers final; false: provisional (the current day, or a day whose end a chain of the vault has not been ingested past yet), \`apy\` and \`navApy\` null. ${SETTLED}`,
        }),
        vault: historyVault,
        assets: z.record(
          z.string(),
          z.object({
            price: usd('Asset price'),
            apy7d: percent('7-day APY of the asset'),
            apy30d: percent('30-day APY of the asset'),
            compositionPct: percent("Share of the vault's value in this asset"),
          }),
        ),
      }),
    ),
  }),
);

export const apyHistoryItem = named(
  'ApyHistory',
  z.object({
    vaultAddress: z.string(),
    history: z.array(
      z
        .object({
          day: unixSeconds('Start of the UTC day'),
          settled: z.literal(true).meta({
            description:
              'Always true: apy-history lists settled days only (the numbers of a settled day are final).',
          }),
          apy: apyBlock.meta({ description: 'Legacy alias of compositionApy (the same object).' }),
          compositionApy: apyBlock.meta({ description: COMPOSITION_APY }),
          navApy: apyBlock.meta({ description: NAV_APY }),
        })
        .meta({ description: `Only settled days; the current UTC day is omitted. ${SETTLED}` }),
    ),
    errors: z
      .array(
        z.object({
          source: z.string(),
          operation: z.string(),
          message: z.string(),
          code: z.string().meta({ description: 'e.g. `TIMEOUT`.' }),
          timestamp: unixSeconds('When the failure happened'),
        }),
      )
      .meta({
        description:
          'The most recent data-source errors in the range (at most `api.maxSourceErrorsPerVault`, default 100), ordered as `order` says.',
      }),
    errorsTotal: z.number().int().meta({
      description: 'How many data-source errors the range holds in all (`errors` lists the most recent).',
    }),
  }),
);

const feeSeries = (what: string) =>
  z.array(feeSeriesPoint).meta({ description: `${what}; one point per day.` });
export const vaultFees = named(
  'VaultFees',
  z.object({
    slug: z.string(),
    managementFee: feeSeries('Management fee accrued (accountant state deltas or fee-rate accrual)'),
    performanceFee: feeSeries('Performance fee accrued'),
    instantRedemptionFee: feeSeries('Instant-redemption fees charged'),
    depositFee: feeSeries('Deposit fees charged'),
    redemptionFee: feeSeries('Redemption fees charged'),
    feesClaimed: feeSeries('Fees claimed'),
  }),
);

export const buildTxResult = named(
  'BuildTxResult',
  z.object({
    chainId: z.number().int(),
    user: z.string(),
    operatorRegistryAddress: z.string(),
    operatorAddress: z.string(),
    enabled: z.boolean(),
    transactions: z
      .array(
        z.object({
          label: z.string().meta({ description: 'e.g. `setOperator`.' }),
          description: z.string(),
          to: z.string(),
          data: z.string(),
          value: z.string().meta({ description: 'Wei, a decimal amount as a string.' }),
        }),
      )
      .meta({
        description: 'setOperator(operator, enabled); empty when the registry already holds that state.',
      }),
  }),
);

export const answerMeta = named(
  'AnswerMeta',
  z
    .object({
      watermark: z.number().int().nullable().meta({
        description:
          'Oldest chain watermark behind the answer, Unix seconds (the `X-Data-Watermark` header); null without one.',
      }),
      blocks: z.record(z.string(), z.number().int()).meta({
        description:
          'Chain id -> the newest stored block (Solana: slot) of that chain whose events the answer holds (the `X-Data-Blocks` header); answers from the settled metrics give the blocks as their settle saw them.',
      }),
      settledThrough: z.number().int().nullable().meta({
        description:
          'Start (Unix seconds) of the latest UTC day whose end every chain behind the answer has been ingested past (the latest day settled for every vault of the answer); null without a watermark.',
      }),
    })
    .meta({ description: 'Only with `?meta=1`: what the answer stands on.' }),
);

/** `{ data: schema }`, the envelope of every success response; a GET's may carry `meta` (`?meta=1`). */
export function envelope<T extends z.ZodType>(schema: T, meta = false) {
  return meta ? z.object({ data: schema, meta: answerMeta.optional() }) : z.object({ data: schema });
}

const vaultHistory = z.object({ vaultAddress: z.string(), history: z.array(holderHistoryEntry) });

/** The `data` payload schema of each endpoint, keyed `METHOD /path` as in the OpenAPI document. */
export const responseData = {
  'GET /token-holders': z.object({
    holders: z.array(tokenHolder).meta({ description: 'Sorted by value descending, ties by address.' }),
    count: z.number().meta({ description: 'Total number of holders (rows).' }),
  }),
  'GET /solana/mint-status/{signature}': mintStatus,
  'GET /vaults': z.array(vaultInfo),
  'GET /vaults/details': z.array(vaultDetails),
  'GET /vaults/{slug}': vaultInfo,
  'GET /vaults/{slug}/details-lite': vaultDetailsLite,
  'GET /vaults/{slug}/performance-history': performanceHistory,
  'GET /vaults/apy-history': z.array(apyHistoryItem),
  'GET /vaults/recent-transactions': z.array(
    z.object({
      vaultAddress: z.string(),
      transactionCount7d: z
        .number()
        .meta({ description: 'Transactions of every type in the last 7 x 24 h.' }),
      recentTransactions: z.array(recentTransaction),
    }),
  ),
  'GET /vaults/{slug}/failed-redemptions': z.object({
    vaultAddress: z.string(),
    failedRedemptions: z.array(failedRedemption),
  }),
  'GET /vaults/{slug}/roles-assignments': z.object({
    vaultAddress: z.string(),
    roleAssignments: z.array(roleAssignment),
    pageInfo: z.object({ endCursor: z.string().nullable(), hasNextPage: z.boolean() }).meta({
      description: 'Always `{ endCursor: null, hasNextPage: false }`: every assignment is returned.',
    }),
  }),
  'GET /vaults/{slug}/holders-history': vaultHistory,
  'GET /vaults/holders-history': z.array(vaultHistory),
  'GET /vaults/holders': z.array(
    z.object({
      vaultAddress: z.string(),
      totalHolders: z.number().meta({ description: HOLDERS }),
      holders: z.array(topHolder).meta({ description: 'The 100 largest (chain, user) balances.' }),
    }),
  ),
  'GET /vaults/fees': z.array(vaultFees),
  'POST /auto-claim/build-tx': buildTxResult,
} as const;
export type EndpointKey = keyof typeof responseData;

/** `GET /vaults/{slug}/details-lite` -> `VaultsSlugDetailsLiteResponse`. */
function responseId(key: string): string {
  const words = key
    .split(' ')[1]
    .split(/[/{}-]+/)
    .filter(Boolean);
  return `${words.map((w) => w[0].toUpperCase() + w.slice(1)).join('')}Response`;
}

/** The whole success body (`{ data }`) of each endpoint, registered as a named component. */
export const responseBodies = Object.fromEntries(
  Object.entries(responseData).map(([key, schema]) => [
    key,
    named(responseId(key), envelope(schema, key.startsWith('GET '))),
  ]),
) as unknown as { [K in EndpointKey]: z.ZodObject<{ data: (typeof responseData)[K] }> };
