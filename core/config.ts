import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { errorMessage, VaultstreamError } from './errors.ts';
import { devnetSchema } from './settings/devnet.ts';
import { chainExtrasShape, ingestSchema } from './settings/evm.ts';
import { mintFlowSchema, solanaSchema } from './settings/solana.ts';
import { sqlSchema } from './settings/sql.ts';

const address = z.string().regex(/^0x[a-fA-F0-9]{40}$/, 'expected a 0x-prefixed 20-byte hex address');
const maybeAddress = z.union([address, z.literal('')]).default('');
const chainEntry = z.object({ startBlock: z.number().int().nonnegative(), accountantType: z.string() });
const CHAIN_KEYS = [
  'mainnet',
  'base',
  'primary',
  'plasma',
  'arbitrum',
  'bsc',
  'worldchain',
  'avalanche',
] as const;
const chainMap = z
  .object(
    Object.fromEntries(CHAIN_KEYS.map((k) => [k, chainEntry.optional()])) as Record<
      (typeof CHAIN_KEYS)[number],
      z.ZodOptional<typeof chainEntry>
    >,
  )
  .strict()
  .prefault({});

export const VAULT_STATUSES = ['active', 'disabled', 'coming_soon', 'hidden'] as const;

const liquidAsset = z.object({
  contractAddress: address,
  symbol: z.string().min(1),
  iconUrl: z.string().default(''),
  decimals: z.number().int().min(0).max(36),
  /** USD price used until a price snapshot for the asset arrives. */
  price: z.number().nonnegative().default(1),
  chainId: z.number().int().positive(),
  minimumSourceRules: z
    .array(
      z.object({
        sourceChain: z.number().int(),
        sourceParams: z.object({ excludeWallets: z.array(z.string()) }),
      }),
    )
    .default([]),
});

/**
 * Where an asset's USD price comes from: `fixed` (the configured `usd`), `rate` (`getRate()` of an
 * accountant or rate provider on `chainId`, `decimals` of the answer, times the USD price of its quote
 * asset) or `aggregator` (a Chainlink-style feed's `latestRoundData()` answer on `chainId`, `decimals` of it).
 */
export const priceSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('fixed'), usd: z.number().nonnegative() }).strict(),
  z
    .object({
      kind: z.literal('rate'),
      chainId: z.number().int().positive(),
      address,
      decimals: z.number().int().min(0).max(36),
      quoteUsdPrice: z.number().nonnegative().default(1),
    })
    .strict(),
  z
    .object({
      kind: z.literal('aggregator'),
      chainId: z.number().int().positive(),
      address,
      decimals: z.number().int().min(0).max(36),
    })
    .strict(),
]);
export type PriceSource = z.infer<typeof priceSourceSchema>;

/**
 * A yield asset the vault holds (docs/architecture.md, Units and formulas compositionApy): its `slug` names the
 * `targetComposition` item it is, `holdings` the token contracts whose `balanceOf(vault)` is
 * read on each chain, `price` where its USD price comes from. Its APYs come from its own
 * price history (ASSET_PRICE snapshots), its weight from the USD value held.
 */
const yieldAsset = z.object({
  slug: z.string().min(1),
  symbol: z.string().min(1),
  decimals: z.number().int().min(0).max(36),
  holdings: z.array(z.object({ chainId: z.number().int().positive(), contractAddress: address })).min(1),
  price: priceSourceSchema,
});
export type YieldAssetConfig = z.infer<typeof yieldAsset>;

/** A vault registry entry: every static field of the spec's VaultInfo, plus `status` and indexing facts. */
export const vaultSchema = z.object({
  slug: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes'),
  status: z.enum(VAULT_STATUSES).default('active'),
  vaultType: z.string().default('boring'),
  category: z.string().default('coreVault'),
  vaultAddress: address,
  coreShareOftAddress: maybeAddress,
  coreVaults: z
    .array(
      z.object({
        coreVaultAddress: z.string(),
        asset: z.string(),
        chainAssets: z.array(z.object({ chainId: z.number().int(), assetAddress: z.string() })),
      }),
    )
    .default([]),
  coreComposers: z
    .array(z.object({ asset: z.string(), composerAddress: z.string(), assetAddress: z.string() }))
    .default([]),
  accountantAddress: address,
  isHubAccountant: z.boolean().default(false),
  coreAccountant: z
    .object({ address: z.string(), isHub: z.boolean(), chain: chainMap })
    .default({ address: '', isHub: false, chain: {} }),
  authorityAddress: maybeAddress,
  tellerContractAddress: maybeAddress,
  decimals: z.number().int().min(0).max(36),
  decimalsOverride: z.array(z.record(z.string(), z.number().int())).default([]),
  chain: chainMap,
  solana: z
    .object({
      mintAddress: z.string(),
      oftStoreAddress: z.string(),
      composerAddress: z.string(),
      decimals: z.number().int(),
      startBlock: z.number().int(),
    })
    .optional(),
  liquidAssets: z.array(liquidAsset).default([]),
  /** Yield assets (composition): everything else the vault holds that earns, with its price source. */
  yieldAssets: z.array(yieldAsset).default([]),
  name: z.string().min(1),
  symbol: z.string().min(1),
  icon: z.string().default(''),
  iconMini: z.string().default(''),
  targetComposition: z
    .array(z.object({ slug: z.string(), name: z.string(), description: z.string(), image: z.string() }))
    .default([]),
  /** Chain ids the share token lives on (EVM); Solana is `solana`. */
  chainIds: z.array(z.number().int().positive()).min(1),
  /** The vault's base asset: the unit of the accountant rate. */
  baseAsset: z
    .object({
      symbol: z.string(),
      decimals: z.number().int().min(0).max(36),
      usdPrice: z.number().nonnegative(),
    })
    .default({ symbol: 'USD', decimals: 6, usdPrice: 1 }),
  /** Role id to name map; defaults to the Nest numbering. */
  roles: z.record(z.string(), z.string()).optional(),
});
export type VaultConfig = z.infer<typeof vaultSchema>;

export const chainSchema = z.object({
  chainId: z.number().int().positive(),
  name: z.string().min(1),
  rpcUrls: z.array(z.string().url()).default([]),
  confirmations: z.number().int().nonnegative().default(12),
  startBlock: z.number().int().nonnegative().default(0),
  pollIntervalMs: z.number().int().positive().default(4000),
  ...chainExtrasShape,
});
export type ChainConfig = z.infer<typeof chainSchema>;

export const configSchema = z
  .object({
    /** Embedded store and in-process bus live here. */
    dataDir: z.string().default('./data'),
    topicPrefix: z
      .string()
      .regex(/^[a-zA-Z0-9._-]*$/)
      .default('vaultstream.'),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    store: z
      .object({
        /** ClickHouse server URL; empty means embedded chDB in `<dataDir>/chdb`. */
        url: z.string().default(''),
        username: z.string().default('default'),
        password: z.string().default(''),
        database: z
          .string()
          .regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/)
          .default('vaultstream'),
        /** Cluster name; when set, migrations render ON CLUSTER, Replicated engines and Distributed tables. */
        cluster: z.string().default(''),
      })
      .prefault({}),
    bus: z
      .object({
        kind: z.enum(['inprocess', 'kafka']).default('inprocess'),
        brokers: z.array(z.string().min(1)).default([]),
        clientId: z.string().default('vaultstream'),
        schemaRegistryUrl: z.string().default(''),
        partitions: z.number().int().min(1).max(256).default(4),
        /** Kafka consumer session timeout: how soon a dead consumer's partitions move to another. */
        sessionTimeoutMs: z.number().int().min(3000).max(300_000).default(30_000),
      })
      .prefault({}),
    streams: z
      .object({
        groupId: z.string().min(1).default('vaultstream-streams'),
        maxBatchSize: z.number().int().min(1).max(1_000_000).default(50_000),
        maxWaitMs: z.number().int().min(0).max(60_000).default(250),
        /** Threads that decode, validate and encode batches (streams/batch-encoder.ts); 0: the main thread. */
        workers: z.number().int().min(0).max(16).default(0),
      })
      .prefault({}),
    api: z
      .object({
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(3000),
        /** Largest accepted JSON request body, in bytes (larger bodies are a 400 BAD_BODY). */
        bodyLimitBytes: z.number().int().min(256).max(10_485_760).default(65_536),
        cache: z
          .object({
            enabled: z.boolean().default(true),
            /** Bound of the response cache: serialized bodies plus their compressed variants. */
            maxBytes: z.number().int().min(0).default(67_108_864),
            /** Longest time an entry is served for one data version (time-relative defaults move on). */
            ttlSeconds: z.number().int().min(0).max(86_400).default(60),
            /** `Cache-Control: max-age` of cached responses. */
            maxAgeSeconds: z.number().int().min(0).max(86_400).default(5),
            /** `Cache-Control: stale-while-revalidate` of cached responses. */
            staleWhileRevalidateSeconds: z.number().int().min(0).max(86_400).default(30),
            /** Bodies smaller than this are sent uncompressed. */
            compressMinBytes: z.number().int().min(0).default(1024),
            /** Cache misses (store loads) one client may have running at once; more are a 429. */
            maxUncachedPerClient: z.number().int().min(1).max(10_000).default(4),
          })
          .prefault({}),
        rateLimit: z
          .object({
            /** On by default; loopback clients (127.0.0.0/8, ::1) are exempt unless `limitLoopback`. */
            enabled: z.boolean().default(true),
            /** Also limit loopback clients (off: local tools and the devnet are never limited). */
            limitLoopback: z.boolean().default(false),
            /** Sustained requests per second per client (token refill rate). */
            rps: z.number().positive().max(1_000_000).default(20),
            /** Bucket size: requests a client may send at once. */
            burst: z.number().int().min(1).max(1_000_000).default(40),
            /** Header naming the client (e.g. `x-forwarded-for` behind a proxy); empty = the peer IP. */
            header: z.string().default(''),
            /** Clients tracked at most; the least recently seen are forgotten first. */
            maxClients: z.number().int().min(1).default(100_000),
          })
          .prefault({}),
        readiness: z
          .object({
            /** `/readyz` is 503 when a chain's stored watermark is further behind its head than this. */
            maxLagSeconds: z.number().int().min(1).max(86_400).default(60),
          })
          .prefault({}),
        buildTx: z
          .object({
            /** Longest time POST /auto-claim/build-tx waits on a chain's RPC before answering 503. */
            timeoutMs: z.number().int().min(100).max(120_000).default(5000),
          })
          .prefault({}),
        /** Most recent data-source errors listed per vault by apy-history (`errorsTotal` counts them all). */
        maxSourceErrorsPerVault: z.number().int().min(0).max(10_000).default(100),
      })
      .prefault({}),
    chains: z.array(chainSchema).default([]),
    vaults: z.array(vaultSchema).default([]),
    ingest: ingestSchema,
    solana: solanaSchema,
    mintFlow: mintFlowSchema,
    devnet: devnetSchema,
    sql: sqlSchema,
  })
  .strict()
  .superRefine((cfg, ctx) => {
    if (cfg.bus.kind === 'kafka' && cfg.bus.brokers.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['bus', 'brokers'],
        message: 'kafka bus needs at least one broker',
      });
    const slugs = new Set<string>();
    cfg.vaults.forEach((v, i) => {
      if (slugs.has(v.slug))
        ctx.addIssue({ code: 'custom', path: ['vaults', i, 'slug'], message: `duplicate slug ${v.slug}` });
      slugs.add(v.slug);
    });
  });
export type Config = z.infer<typeof configSchema>;

/** Named environment variables (the operator-facing ones) and the config key each sets. */
export const ENV_KEYS: Record<string, { path: string[]; parse: (v: string) => unknown }> = {
  VAULTSTREAM_DATA_DIR: { path: ['dataDir'], parse: String },
  CLICKHOUSE_URL: { path: ['store', 'url'], parse: String },
  CLICKHOUSE_USER: { path: ['store', 'username'], parse: String },
  CLICKHOUSE_PASSWORD: { path: ['store', 'password'], parse: String },
  CLICKHOUSE_DATABASE: { path: ['store', 'database'], parse: String },
  CLICKHOUSE_CLUSTER: { path: ['store', 'cluster'], parse: String },
  KAFKA_BROKERS: {
    path: ['bus', 'brokers'],
    parse: (v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
  },
  SCHEMA_REGISTRY_URL: { path: ['bus', 'schemaRegistryUrl'], parse: String },
  TOPIC_PREFIX: { path: ['topicPrefix'], parse: String },
  API_HOST: { path: ['api', 'host'], parse: String },
  API_PORT: { path: ['api', 'port'], parse: Number },
  LOG_LEVEL: { path: ['logLevel'], parse: String },
};

function setPath(obj: Record<string, any>, path: string[], value: unknown): void {
  let o = obj;
  for (const k of path.slice(0, -1)) {
    if (typeof o[k] !== 'object' || o[k] === null) o[k] = {};
    o = o[k];
  }
  o[path[path.length - 1]] = value;
}

type AnySchema = { def: Record<string, any> };

/** The schema under wrappers (optional, default, prefault, pipe, ...). */
function unwrap(schema: AnySchema): AnySchema {
  let t = schema;
  for (let i = 0; i < 16; i++) {
    const d = t.def;
    if (d.innerType) t = d.innerType;
    else if (d.type === 'pipe') t = d.in;
    else break;
  }
  return t;
}

/**
 * The schema of `key` under `schema`: the child schema, `'any'` where any key is
 * allowed (records, unions, free-form values), or undefined for an unknown key.
 */
function childSchema(schema: AnySchema, key: string): AnySchema | 'any' | undefined {
  const t = unwrap(schema);
  const d = t.def;
  if (d.type === 'object') return Object.hasOwn(d.shape, key) ? d.shape[key] : undefined;
  if (d.type === 'array') return /^\d+$/.test(key) ? d.element : undefined;
  if (d.type === 'record') return d.valueType ?? 'any';
  return 'any';
}

/** Every key of `value` that `schema` does not know, as dotted paths (the config file is strict). */
export function unknownKeys(schema: AnySchema, value: unknown, path: string[] = []): string[] {
  if (value === null || typeof value !== 'object') return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const child = childSchema(schema, key);
    if (child === undefined) out.push([...path, key].join('.'));
    else if (child !== 'any') out.push(...unknownKeys(child, v, [...path, key]));
  }
  return out;
}

/**
 * Applies environment overrides: the named variables above, and any
 * `VAULTSTREAM__a__b=value` (JSON when it parses, else a string) for `a.b`. A
 * `VAULTSTREAM__` variable naming no setting is an error.
 */
export function applyEnv(raw: Record<string, any>, env: NodeJS.ProcessEnv): Record<string, any> {
  const out = structuredClone(raw);
  for (const [name, { path, parse }] of Object.entries(ENV_KEYS)) {
    const v = env[name];
    if (v !== undefined && v !== '') setPath(out, path, parse(v));
  }
  if (env.KAFKA_BROKERS) setPath(out, ['bus', 'kind'], 'kafka');
  const unknown: string[] = [];
  for (const [name, v] of Object.entries(env)) {
    if (!name.startsWith('VAULTSTREAM__') || v === undefined) continue;
    const path = name.slice('VAULTSTREAM__'.length).split('__').filter(Boolean);
    let schema: AnySchema | 'any' | undefined = configSchema;
    for (let i = 0; i < path.length && schema !== 'any'; i++) {
      schema = childSchema(schema, path[i]);
      if (schema === undefined) {
        unknown.push(`  ${name}: unknown setting ${path.slice(0, i + 1).join('.')}`);
        break;
      }
    }
    if (path.length === 0) unknown.push(`  ${name}: names no setting`);
    if (schema === undefined || path.length === 0) continue;
    let value: unknown = v;
    try {
      value = JSON.parse(v);
    } catch {
      /* plain string */
    }
    setPath(out, path, value);
  }
  if (unknown.length)
    throw new VaultstreamError('CONFIG_INVALID', `invalid environment:\n${unknown.join('\n')}`, {
      hint: "VAULTSTREAM__<key>__<subkey> must name a setting of the config file (see the README's Settings)",
    });
  return out;
}

/** Validates a raw config object; the error names every bad key, unknown keys included. */
export function parseConfig(raw: unknown): Config {
  const res = configSchema.safeParse(raw);
  const extra = unknownKeys(configSchema, raw);
  if (res.success && extra.length === 0) return res.data;
  const lines = [
    ...extra.map((k) => `  ${k}: unknown key`),
    ...(res.success ? [] : res.error.issues)
      .filter((i) => i.code !== 'unrecognized_keys')
      .map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`),
  ];
  throw new VaultstreamError('CONFIG_INVALID', `invalid configuration:\n${lines.join('\n')}`, {
    details: { issues: res.success ? [] : res.error.issues, unknownKeys: extra },
    hint: extra.length
      ? 'remove or correct the unknown keys (every setting is listed in the README)'
      : undefined,
  });
}

export const DEFAULT_CONFIG_FILE = 'config/default.yaml';

/** Reads the config file (YAML or JSON), applies the environment, validates once. */
export function loadConfig(file?: string, env: NodeJS.ProcessEnv = process.env): Config {
  const path = resolve(file ?? env.VAULTSTREAM_CONFIG ?? DEFAULT_CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    const from = file ? '--config' : env.VAULTSTREAM_CONFIG ? 'VAULTSTREAM_CONFIG' : 'the default';
    const why = (cause as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : errorMessage(cause);
    throw new VaultstreamError('CONFIG_NOT_FOUND', `cannot read config file ${path} (${from}): ${why}`, {
      cause,
      hint: 'choose the file with --config <file> or VAULTSTREAM_CONFIG=<file>; the default is config/default.yaml, relative to the working directory',
    });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (cause) {
    throw new VaultstreamError(
      'CONFIG_INVALID',
      `config file ${path} is not valid YAML/JSON: ${String(cause)}`,
      {
        cause,
      },
    );
  }
  return parseConfig(applyEnv(raw as Record<string, any>, env));
}
