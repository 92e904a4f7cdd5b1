/**
 * Environment overrides of the config file and the check for unknown keys: both walk the
 * zod schema of the configuration (its `def`s), so they know every setting it declares.
 */
import { VaultstreamError } from '../errors.ts';

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

/** A zod schema as this walk reads it (zod 4's `def`). */
export type AnySchema = { def: Record<string, any> };

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
 * Applies environment overrides to the raw config: the named variables above, and any
 * `VAULTSTREAM__a__b=value` (JSON when it parses, else a string) for `a.b`. A
 * `VAULTSTREAM__` variable naming no setting of `schema` is an error.
 */
export function overrideFromEnv(
  schema: AnySchema,
  raw: Record<string, any>,
  env: NodeJS.ProcessEnv,
): Record<string, any> {
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
    let child: AnySchema | 'any' | undefined = schema;
    for (let i = 0; i < path.length && child !== 'any'; i++) {
      child = childSchema(child, path[i]);
      if (child === undefined) {
        unknown.push(`  ${name}: unknown setting ${path.slice(0, i + 1).join('.')}`);
        break;
      }
    }
    if (path.length === 0) unknown.push(`  ${name}: names no setting`);
    if (child === undefined || path.length === 0) continue;
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
      hint: 'VAULTSTREAM__<key>__<subkey> must name a setting of the config file (see docs/configuration.md)',
    });
  return out;
}
