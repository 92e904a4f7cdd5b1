/**
 * The configuration: one zod schema over the sections of core/settings/, read from a YAML or
 * JSON file, overridden from the environment (core/settings/env.ts) and validated once.
 * Every setting is listed in docs/configuration.md (generated from this schema).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { errorMessage, VaultstreamError } from './errors.ts';
import { apiSchema } from './settings/api.ts';
import { devnetSchema } from './settings/devnet.ts';
import { overrideFromEnv, unknownKeys } from './settings/env.ts';
import { ingestSchema } from './settings/evm.ts';
import { busSchema, storeSchema, streamsSchema } from './settings/pipeline.ts';
import { chainSchema, vaultSchema } from './settings/registry.ts';
import { mintFlowSchema, solanaSchema } from './settings/solana.ts';
import { sqlSchema } from './settings/sql.ts';

export const configSchema = z
  .object({
    dataDir: z.string().default('./data').describe('Embedded store and in-process bus live here.'),
    topicPrefix: z
      .string()
      .regex(/^[a-zA-Z0-9._-]*$/)
      .default('vaultstream.')
      .describe('Topic name = prefix + event family.'),
    logLevel: z
      .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
      .default('info')
      .describe(
        'pino level; logs go to stderr: human-readable lines on a terminal, JSON lines otherwise (`LOG_FORMAT=pretty` or `json` to choose).',
      ),
    store: storeSchema,
    bus: busSchema,
    streams: streamsSchema,
    api: apiSchema,
    chains: z
      .array(chainSchema)
      .default([])
      .describe("The EVM chains the vaults live on. With `devnet.enabled` the devnet's chains replace them."),
    vaults: z
      .array(vaultSchema)
      .default([])
      .describe(
        "The vault registry (published as `registry` events when the ingest role starts). With `devnet.enabled` the devnet's vaults replace them.",
      ),
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

/**
 * Applies environment overrides: the named variables of `ENV_KEYS`, and any
 * `VAULTSTREAM__a__b=value` (JSON when it parses, else a string) for `a.b`. A
 * `VAULTSTREAM__` variable naming no setting is an error.
 */
export function applyEnv(raw: Record<string, any>, env: NodeJS.ProcessEnv): Record<string, any> {
  return overrideFromEnv(configSchema, raw, env);
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
      ? 'remove or correct the unknown keys (every setting is listed in docs/configuration.md)'
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
