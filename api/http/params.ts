/**
 * Input schemas of every endpoint (the spec's parameter tables, docs/architecture.md, Endpoint semantics)
 * and the helpers that apply them to a request. The OpenAPI document is generated
 * from these same schemas, so a rule written here is a rule documented there.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import { VAULT_STATUSES } from '../../core/settings/registry.ts';
import { type Issue, type IssueLocation, toIssues, validationError } from './errors.ts';

export type VaultStatus = (typeof VAULT_STATUSES)[number];
/** Milliseconds since the epoch; injectable so time-relative defaults are testable. */
export type Clock = () => number;

const DAY_SECONDS = 86_400;
/** ClickHouse `DateTime` and `UInt32` (chain ids) both end here. */
const UINT32_MAX = 4_294_967_295;

// Query parameters that may be given more than once; any other repeated one is a 400.
const REPEATABLE = new WeakSet<z.ZodType>();
function repeatable<T extends z.ZodType>(schema: T): T {
  REPEATABLE.add(schema);
  return schema;
}

/** A decimal integer in a query string (no sign, exponent or hex), checked against [min, max]. */
function intParam(min: number, max: number, what: string) {
  const message = `expected ${what}, an integer from ${min} to ${max}`;
  return z
    .string()
    .regex(/^[0-9]+$/, message)
    .transform(Number)
    .pipe(z.number().int().min(min, message).max(max, message));
}

/** `true` or `false`, nothing else. */
const boolParam = z.stringbool({ truthy: ['true'], falsy: ['false'], case: 'sensitive' });

const unixSeconds = intParam(0, UINT32_MAX, 'Unix time in seconds');
const chainIdParam = intParam(1, UINT32_MAX, 'a chain id').meta({ description: 'Chain id (Solana is 101).' });
const hexString = z.string().regex(/^0x[a-fA-F0-9]+$/, 'expected 0x followed by hex digits');
const order = z
  .enum(['asc', 'desc'])
  .default('desc')
  .meta({ description: 'Sort by day: `asc` oldest first, `desc` newest first.' });

const dateRangeShape = {
  startDate: unixSeconds.optional().meta({ description: 'Inclusive start, Unix seconds.' }),
  endDate: unixSeconds.optional().meta({ description: 'Inclusive end, Unix seconds.' }),
};

/** Adds an issue on `startDate` when both bounds are given and start is after end. */
function startNotAfterEnd(
  v: { startDate?: number | string; endDate?: number | string },
  ctx: z.RefinementCtx,
): void {
  if (v.startDate !== undefined && v.endDate !== undefined && v.startDate > v.endDate)
    ctx.addIssue({ code: 'custom', path: ['startDate'], message: 'startDate must not be after endDate' });
}

const vaultFilterShape = {
  status: z
    .enum([...VAULT_STATUSES, 'all'])
    .optional()
    .meta({
      description:
        'CMS status of the vaults to list; `all` lists every vault. Default `active`. Wins over `live`.',
    }),
  live: boolParam.optional().meta({
    deprecated: true,
    description:
      'Deprecated, use `status`. `true` = active vaults, `false` = every status but active. Ignored when `status` is given.',
  }),
};

/** The CMS statuses selected by `status` / `live` (docs/architecture.md, Endpoint semantics: `status` wins; default active). */
export function selectedStatuses(q: { status?: VaultStatus | 'all'; live?: boolean }): VaultStatus[] {
  if (q.status === 'all') return [...VAULT_STATUSES];
  if (q.status) return [q.status];
  if (q.live === false) return VAULT_STATUSES.filter((s) => s !== 'active');
  return ['active'];
}

/** Replaces `status`/`live` by `statuses`, the CMS statuses to include. */
function withStatuses<T extends { status?: VaultStatus | 'all'; live?: boolean }>(q: T) {
  const { status, live, ...rest } = q;
  return { ...rest, statuses: selectedStatuses({ status, live }) };
}

const liveLiquidity = boolParam.default(false).meta({
  description:
    'Read liquid asset balances from the chains at request time (falls back to the last snapshot, saying so in the `X-Liquidity-Source` header).',
});

// ---- path parameters ---------------------------------------------------------------------------

export const slugPath = z.object({
  slug: z.string().min(1, 'expected a vault slug').meta({ description: 'Vault slug.' }),
});
export const signaturePath = z.object({
  signature: z
    .string()
    .regex(
      /^[1-9A-HJ-NP-Za-km-z]{64,88}$/,
      'expected a base58 Solana transaction signature (64-88 characters)',
    )
    .meta({ description: 'Solana transaction signature (base58).' }),
});

// ---- query parameters --------------------------------------------------------------------------

export const noQuery = z.object({});
export const vaultsQuery = z.object(vaultFilterShape).transform(withStatuses);
export const vaultDetailsQuery = z.object({ ...vaultFilterShape, liveLiquidity }).transform(withStatuses);
export const detailsLiteQuery = z.object({ liveLiquidity });

export const performanceHistoryQuery = z
  .object({
    ...dateRangeShape,
    order,
    includeCompositeAssets: boolParam
      .default(false)
      .meta({ description: 'Include per-yield-asset composition metrics (`assets` of each day).' }),
    format: z
      .enum(['json', 'csv'])
      .default('json')
      .meta({ description: '`csv` exports the history as `text/csv`, one row per day.' }),
  })
  .superRefine(startNotAfterEnd);

export const apyHistoryQuery = z
  .object({
    ...dateRangeShape,
    order,
    chainId: chainIdParam.default(98866).meta({ description: 'Chain whose accountant rate prices navApy.' }),
    ...vaultFilterShape,
  })
  .superRefine(startNotAfterEnd)
  .transform(withStatuses);

export const recentTransactionsQuery = z
  .object({
    ...vaultFilterShape,
    chainId: chainIdParam.optional(),
    limit: intParam(1, 100, 'a transaction count')
      .default(10)
      .meta({ description: 'Most recent transactions per vault (1 to 100).' }),
  })
  .transform(withStatuses);

/** failed-redemptions query; `startDate` defaults to 30 days before `clock()` (both filter `expiresAt`). */
export function makeFailedRedemptionsQuery(clock: Clock = Date.now) {
  return z
    .object({
      startDate: unixSeconds
        .optional()
        .meta({ description: 'Inclusive lower bound of `expiresAt`, Unix seconds. Default 30 days ago.' }),
      endDate: unixSeconds
        .optional()
        .meta({ description: 'Inclusive upper bound of `expiresAt`, Unix seconds.' }),
      user: hexString.optional().meta({ description: 'Address of the requesting user.' }),
      chainId: chainIdParam.optional(),
      queueAddress: hexString
        .optional()
        .meta({ description: 'Atomic queue address; applies only to atomicQueue redemptions.' }),
    })
    .superRefine(startNotAfterEnd)
    .transform((q) => ({
      ...q,
      startDate: q.startDate ?? Math.max(0, Math.floor(clock() / 1000) - 30 * DAY_SECONDS),
      user: q.user?.toLowerCase(),
      queueAddress: q.queueAddress?.toLowerCase(),
    }));
}
export const failedRedemptionsQuery = makeFailedRedemptionsQuery();

const legacyIgnored = repeatable(
  z.unknown().optional().meta({ deprecated: true, description: 'Legacy; accepted and ignored.' }),
);
export const rolesAssignmentsQuery = z
  .object({ limit: legacyIgnored, cursor: legacyIgnored })
  .transform(() => ({}));

export const holdersHistoryQuery = z.object(dateRangeShape).superRefine(startNotAfterEnd);
export const vaultsHoldersHistoryQuery = z
  .object({ ...dateRangeShape, ...vaultFilterShape })
  .superRefine(startNotAfterEnd)
  .transform(withStatuses);
export const vaultsHoldersQuery = z
  .object({ chainId: chainIdParam.optional(), ...vaultFilterShape })
  .transform(withStatuses);

const isoDay = z.iso.date({ error: 'expected a UTC calendar date YYYY-MM-DD' });

/** `YYYY-MM-DD` of the UTC day `years` calendar years before `day` (29 February falls back to the 28th). */
export function yearsBefore(day: string, years: number): string {
  const [y, m, d] = day.split('-').map(Number);
  const lastOfMonth = new Date(Date.UTC(y - years, m, 0)).getUTCDate();
  return new Date(Date.UTC(y - years, m - 1, Math.min(d, lastOfMonth))).toISOString().slice(0, 10);
}

/** fees query; `endDate` defaults to today (UTC, from `clock()`), `startDate` to one calendar year before it. */
export function makeFeesQuery(clock: Clock = Date.now) {
  return z
    .object({
      slug: repeatable(
        z
          .union([z.string(), z.array(z.string())])
          .transform((v) => (Array.isArray(v) ? v : [v]))
          .pipe(z.array(z.string().min(1, 'expected a vault slug')))
          .optional()
          .meta({
            description: 'Vault slugs; repeat the parameter for several vaults. Default: every vault.',
          }),
      ),
      startDate: isoDay
        .optional()
        .meta({ description: 'Inclusive UTC start day. Default one calendar year before `endDate`.' }),
      endDate: isoDay.optional().meta({ description: 'Inclusive UTC end day. Default today (UTC).' }),
    })
    .transform((q, ctx) => {
      const endDate = q.endDate ?? new Date(clock()).toISOString().slice(0, 10);
      const range = { startDate: q.startDate ?? yearsBefore(endDate, 1), endDate };
      startNotAfterEnd(range, ctx);
      return { slug: q.slug, ...range };
    });
}
export const feesQuery = makeFeesQuery();

// ---- the event stream (GET /v1/events) ---------------------------------------------------------

/** The kinds of event a stream sends (`types`). */
export const EVENT_TYPES = ['versions', 'activity'] as const;

export const eventsQuery = z.object({
  vault: repeatable(
    z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : [v]))
      .pipe(z.array(z.string().min(1, 'expected a vault slug')))
      .optional()
      .meta({
        description:
          'Only events about these vaults (repeat the parameter for several): their activity rows, and the versions that change one of them (or whose changes are not known). Default: every vault.',
      }),
  ),
  types: z
    .string()
    .default('versions,activity')
    .transform((v) => v.split(','))
    .pipe(z.array(z.enum(EVENT_TYPES, 'expected versions or activity')).min(1))
    .meta({ description: 'Comma-separated kinds of event: `versions`, `activity`. Default both.' }),
  lastEventId: z.string().min(1).max(128).optional().meta({
    description:
      'Where to resume, for a client that cannot send the `Last-Event-ID` header (the header wins).',
  }),
});

// ---- request bodies ----------------------------------------------------------------------------

export const SUPPORTED_CHAIN_IDS = [98866, 1, 8453, 56, 9745, 43114] as const;

export const buildTxBody = z.strictObject({
  chainId: z
    .literal(SUPPORTED_CHAIN_IDS, {
      error: `expected one of the supported chain ids ${SUPPORTED_CHAIN_IDS.join(', ')}`,
    })
    .meta({
      description: 'Chain of the operator registry: 98866 (the primary chain), 1, 8453, 56, 9745 or 43114.',
    }),
  user: z
    .string()
    .regex(/^0x[a-fA-F0-9]{40}$/, 'expected a 0x-prefixed 20-byte hex address')
    .meta({ description: 'User (controller) address.' }),
  enabled: z.boolean().meta({ description: 'Whether the redeem operator is to be approved for the user.' }),
  skipSimulation: z
    .boolean()
    .default(false)
    .meta({ description: 'Skip the `eth_call` simulation preflight of the setOperator transaction.' }),
});
export type BuildTxBody = z.output<typeof buildTxBody>;

// ---- applying them -----------------------------------------------------------------------------

/** The `z.object` under a schema's refinements and transforms (its parameter list). */
export function objectOf(schema: z.ZodType): z.ZodObject | undefined {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodPipe) s = s.in as z.ZodType;
  return s instanceof z.ZodObject ? s : undefined;
}

function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where: IssueLocation,
  pre: Issue[] = [],
) {
  const res = schema.safeParse(input);
  const issues = [...pre, ...(res.success ? [] : toIssues(res.error, where))];
  if (issues.length > 0) throw validationError(issues);
  return res.data as z.output<S>;
}

/**
 * Validates `ctx.query` against `schema` and returns the parsed parameters.
 * Unknown parameters are ignored; a known one given twice (other than the
 * repeatable ones) is an issue. Throws a 400 `BAD_PARAMETER` whose `details`
 * list every issue (`in`, `path`, `message`).
 */
export function parseQuery<S extends z.ZodType>(
  schema: S,
  ctx: Pick<Context, 'query'> & { state?: Record<string, unknown> },
): z.output<S> {
  const shape = objectOf(schema)?.shape ?? {};
  const input: Record<string, unknown> = {};
  const repeated: Issue[] = [];
  for (const [key, value] of Object.entries(ctx.query)) {
    if (!Object.hasOwn(shape, key)) continue;
    if (Array.isArray(value) && !REPEATABLE.has(shape[key] as z.ZodType))
      repeated.push({ in: 'query', path: key, message: 'parameter given more than once' });
    else input[key] = value;
  }
  const parsed = parseOrThrow(schema, input, 'query', repeated);
  // The response cache keys on this (api/http/cache.ts): unknown parameters, their order and
  // spelled-out defaults never make a new key.
  if (ctx.state) ctx.state[QUERY_KEY] = canonicalJson(parsed);
  return parsed;
}

/** `ctx.state` member holding the canonical form of the validated query (see `parseQuery`). */
export const QUERY_KEY = 'vaultstreamQueryKey';

/** JSON with object keys sorted at every level (arrays keep their order): equal values, equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Validates the router's path parameters (`ctx.params`); throws a 400 naming each bad one. */
export function parsePath<S extends z.ZodType>(schema: S, ctx: object): z.output<S> {
  return parseOrThrow(schema, { ...(ctx as { params?: Record<string, string> }).params }, 'path');
}

/**
 * Validates the JSON request body (parsed by the body parser). A request that is
 * not `application/json` is a 400 `BAD_BODY`, as is any issue in the body.
 */
export function parseBody<S extends z.ZodType>(schema: S, ctx: Context): z.output<S> {
  if (!ctx.is('application/json'))
    throw validationError([
      { in: 'body', path: 'body', message: 'expected a JSON object body (Content-Type: application/json)' },
    ]);
  return parseOrThrow(schema, (ctx.request as { body?: unknown }).body, 'body');
}
