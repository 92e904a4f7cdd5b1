/**
 * The sixteen endpoints of the specification, each with its input schemas, as
 * one table: the OpenAPI document is generated from it, and the server mounts
 * its handlers by `key`. Static paths come before `/vaults/{slug}` so a router
 * that matches in order never reads `details` as a slug.
 */
import type { z } from 'zod';
import {
  apyHistoryQuery,
  buildTxBody,
  detailsLiteQuery,
  failedRedemptionsQuery,
  feesQuery,
  holdersHistoryQuery,
  noQuery,
  performanceHistoryQuery,
  recentTransactionsQuery,
  rolesAssignmentsQuery,
  signaturePath,
  slugPath,
  vaultDetailsQuery,
  vaultsHoldersHistoryQuery,
  vaultsHoldersQuery,
  vaultsQuery,
} from './params.ts';
import { SETTLED } from './resources.ts';
import type { EndpointKey } from './responses.ts';

export interface Endpoint {
  /** `METHOD /path` with OpenAPI path templates, e.g. `GET /vaults/{slug}`. */
  key: EndpointKey;
  method: 'GET' | 'POST';
  /** OpenAPI form, relative to `/v1`: `/vaults/{slug}`. */
  path: string;
  /** Koa router form, relative to `/v1`: `/vaults/:slug`. */
  routerPath: string;
  operationId: string;
  summary: string;
  description: string;
  params?: z.ZodType;
  query: z.ZodType;
  body?: z.ZodType;
  /** Error statuses beyond 400 and 500 that this endpoint answers. */
  errors: number[];
  /** Also answers `text/csv` (with `format=csv`). */
  csv?: boolean;
  tag: string;
}

type Row = Omit<Endpoint, 'key' | 'routerPath'>;
const rows: Row[] = [
  {
    method: 'GET',
    path: '/token-holders',
    operationId: 'getTokenHolders',
    summary: 'Token holders across all vaults',
    description:
      'One row per (holder address, token address): EVM vault address (balances summed across all EVM chains), the Solana mint separately. `balance` in decimal-adjusted tokens, `value` in USD. Sorted by `value` descending, ties by address. The body is streamed. A failure answers 500 `{ error: string }` (plus `code`).',
    query: noQuery,
    errors: [503],
    tag: 'holders',
  },
  {
    method: 'GET',
    path: '/solana/mint-status/{signature}',
    operationId: 'getSolanaMintStatus',
    summary: 'Status of a Solana mint flow',
    description:
      'Steps in order: solana, cctpAttestation, predicate, relay, composer, oft, solanaMint, reclaim. Step `status` is one of pending, in_progress, completed, failed, skipped (`statusCode` 0..4 in that order); `overallStatus` one of pending, processing, completed, failed, refunded (codes 0..4); `progress` = "completed steps/applicable steps" (e.g. "5/7"; `reclaim` only applies on refund). An unknown signature is looked up on demand; a transaction that is not a mint flow is 404.',
    params: signaturePath,
    query: noQuery,
    errors: [404, 503],
    tag: 'solana',
  },
  {
    method: 'GET',
    path: '/vaults',
    operationId: 'listVaults',
    summary: 'Vaults and their configuration',
    description:
      "`tvl` and `volume24h` in USD; `sec30d` in percent, from the latest settled day's navApy (0 when there is no settled day with 30 days of price history); `numHolders` counts distinct addresses with a positive balance across all chains. volume24h = USD value of the assets of DEPOSIT, WITHDRAW and INSTANT_REDEEM activity in the last 24 h (asset amounts with their decimals, valued at the base asset's USD price).",
    query: vaultsQuery,
    errors: [503],
    tag: 'vaults',
  },
  {
    method: 'GET',
    path: '/vaults/details',
    operationId: 'listVaultDetails',
    summary: 'Vaults with their metrics',
    description:
      "USD: tvl, volume24h, liquidFunds, pendingRedemptionsValue, shortfall. Percent: apy, tvl30DayChange, liquidFundsRange. tokenPrice: share price in the base asset. tvl = sum over chains of totalSupply * rate * base-asset USD price, plus Solana supply; tvl30DayChange = (tvl now / tvl 30 days ago - 1) * 100 (0 without a tvl 30 days ago); liquidFundsRange = liquidFunds / tvl * 100 (0 when tvl is 0); shortfall = max(0, pendingRedemptionsValue - liquidFunds); `apy` is the latest settled day's navApy (members null without that history); volume24h as in GET /vaults. liquidFunds = the latest ASSET_BALANCE snapshot of each configured liquid asset (its chain and contract) times its latest ASSET_PRICE snapshot, else its configured `price`; `liveLiquidity=true` reads the balances from the chains when a live reader is available and otherwise answers from the snapshots, with header `X-Liquidity-Source: live|snapshot`. pendingRedemptions: the shares pending redemption, shares in each chain's decimals, valued at the current share price: AtomicQueue requests whose latest update is not filled or cancelled with a deadline after now, and for an ERC-7540 vault each controller's pendingRedeemRequest (its requests less what was fulfilled, in whole or in part, or taken off by updateRedeem; what is already claimable is not pending).",
    query: vaultDetailsQuery,
    errors: [503],
    tag: 'vaults',
  },
  {
    method: 'GET',
    path: '/vaults/apy-history',
    operationId: 'getApyHistory',
    summary: 'APY per settled day, per vault',
    description: `Only settled days; the current UTC day is omitted even inside the range. ${SETTLED} \`compositionApy\` is the composition-weighted yield APY, \`apy\` its legacy alias, \`navApy\` the APY from share price changes. A failing data source is reported in the vault's \`errors\`: its data-source errors timed within startDate..endDate (default: all up to now), ordered by time as \`order\` says. navApy is priced on \`chainId\` (null members where that chain lacks the history).`,
    query: apyHistoryQuery,
    errors: [503],
    tag: 'history',
  },
  {
    method: 'GET',
    path: '/vaults/recent-transactions',
    operationId: 'getRecentTransactions',
    summary: 'Latest transactions per vault',
    description:
      'Up to `limit` transactions per vault, newest first. `transactionCount7d` counts transactions of every type in the last 7 x 24 h. Shares and assets in decimal-adjusted tokens.',
    query: recentTransactionsQuery,
    errors: [503],
    tag: 'activity',
  },
  {
    method: 'GET',
    path: '/vaults/holders-history',
    operationId: 'getVaultsHoldersHistory',
    summary: 'Holder counts per day, every vault',
    description:
      'Per vault, chain and UTC day: holder count sampled at the end of every hour; start = count at 00:00, end = last sample, min/max/average over the samples, count = number of samples (24 for a past day). Solana uses chain id 101.',
    query: vaultsHoldersHistoryQuery,
    errors: [503],
    tag: 'holders',
  },
  {
    method: 'GET',
    path: '/vaults/holders',
    operationId: 'getVaultsHolders',
    summary: 'Top holders per vault',
    description:
      'Per vault the 100 largest (chain, user) balances (decimal-adjusted tokens); `holderSince` = when that balance last turned positive; `totalHolders` = distinct addresses with a positive balance across all chains.',
    query: vaultsHoldersQuery,
    errors: [503],
    tag: 'holders',
  },
  {
    method: 'GET',
    path: '/vaults/fees',
    operationId: 'getVaultFees',
    summary: 'Daily fees per vault',
    description:
      'Daily per vault across all indexed chains, in USD: management and performance fees accrued (accountant state deltas or fee-rate accrual), instant-redemption, deposit and redemption fees charged, fees claimed. Days with nothing are 0, so every series covers the whole range.',
    query: feesQuery,
    errors: [503],
    tag: 'history',
  },
  {
    method: 'GET',
    path: '/vaults/{slug}',
    operationId: 'getVault',
    summary: 'One vault and its configuration',
    description: 'As an item of GET /vaults. Unknown slug: 404.',
    params: slugPath,
    query: noQuery,
    errors: [404, 503],
    tag: 'vaults',
  },
  {
    method: 'GET',
    path: '/vaults/{slug}/details-lite',
    operationId: 'getVaultDetailsLite',
    summary: 'One vault with its metrics',
    description:
      'As an item of GET /vaults/details without the pending-redemption fields. Units: tvl, volume24h, liquidFunds in USD; apy, tvl30DayChange, liquidFundsRange in percent. Unknown slug: 404.',
    params: slugPath,
    query: detailsLiteQuery,
    errors: [404, 503],
    tag: 'vaults',
  },
  {
    method: 'GET',
    path: '/vaults/{slug}/performance-history',
    operationId: 'getPerformanceHistory',
    summary: 'Daily price, TVL, liquid funds and APY of a vault',
    description: `One entry per UTC day. The current day carries price, tvl and liquidFunds, with \`apy\` and \`navApy\` null until it is settled. ${SETTLED} \`format=csv\` answers text/csv: a header row, one row per day, columns day,date,price,tvl,liquidFunds,apy_rolling7d,... and one group per asset when assets are included. Days run from the vault's first price to today, those overlapping startDate..endDate. \`assets\` lists the vault's targetComposition items (slug, name); with \`includeCompositeAssets=true\` each day carries, per item, its latest COMPOSITION snapshot by the day's end (weight = compositionPct, apy7d, apy30d, USD price or else the item's ASSET_PRICE snapshot). compositionApy (\`apy\`) weights those items only, renormalised. Unknown slug: 404.`,
    params: slugPath,
    query: performanceHistoryQuery,
    errors: [404, 503],
    csv: true,
    tag: 'history',
  },
  {
    method: 'GET',
    path: '/vaults/{slug}/failed-redemptions',
    operationId: 'getFailedRedemptions',
    summary: 'Expired, unfilled redemption requests of a vault',
    description:
      'A queue request whose latest update has amount > 0, with no fill after it, whose deadline has passed. Date filters apply to `expiresAt`; `startDate` defaults to 30 days ago. Unknown slug: 404.',
    params: slugPath,
    query: failedRedemptionsQuery,
    errors: [404, 503],
    tag: 'activity',
  },
  {
    method: 'GET',
    path: '/vaults/{slug}/roles-assignments',
    operationId: 'getRolesAssignments',
    summary: 'Role assignments of a vault',
    description:
      "Latest state per (chain, user, role) from `UserRoleUpdated`; names from the vault's role map, unknown ids as `ROLE_<n>`. Every assignment is returned: the legacy `limit` and `cursor` are ignored and `pageInfo` is `{ endCursor: null, hasNextPage: false }`. Unknown slug: 404.",
    params: slugPath,
    query: rolesAssignmentsQuery,
    errors: [404, 503],
    tag: 'activity',
  },
  {
    method: 'GET',
    path: '/vaults/{slug}/holders-history',
    operationId: 'getHoldersHistory',
    summary: 'Holder counts per day of a vault',
    description:
      'Per chain and UTC day, the holder count sampled at the end of every hour (see GET /vaults/holders-history). Unknown slug: 404.',
    params: slugPath,
    query: holdersHistoryQuery,
    errors: [404, 503],
    tag: 'holders',
  },
  {
    method: 'POST',
    path: '/auto-claim/build-tx',
    operationId: 'buildAutoClaimTx',
    summary: 'Build the transaction enabling or disabling the redeem operator',
    description:
      "One `setOperator(operator, enabled)` call to the chain's operator registry; `transactions` is empty when the registry already holds the wanted state. Unless `skipSimulation`, the call is simulated with `eth_call` from `user`; a revert is 422 `SIMULATION_REVERTED` with the decoded reason. Unknown keys in the body are rejected.",
    query: noQuery,
    body: buildTxBody,
    errors: [422, 503],
    tag: 'actions',
  },
];

/** Every endpoint, static paths before parameterised ones. */
export const ENDPOINTS: readonly Endpoint[] = rows.map((r) => ({
  ...r,
  key: `${r.method} ${r.path}` as EndpointKey,
  routerPath: r.path.replace(/\{(\w+)\}/g, ':$1'),
}));

/** The endpoint of `key`; throws for an unknown key (a programming error). */
export function endpoint(key: EndpointKey): Endpoint {
  const found = ENDPOINTS.find((e) => e.key === key);
  if (!found) throw new Error(`no endpoint ${key}`);
  return found;
}
