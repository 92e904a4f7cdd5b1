/**
 * The settings reference (docs/configuration.md), generated from the configuration's zod schema:
 * every key with its type, default, environment variable and `.describe()` text, so the page
 * cannot drift from what the validator accepts (test/unit/settings-reference.test.ts).
 */
import { z } from 'zod';
import { ENV_KEYS } from './env.ts';

/** A JSON Schema node as zod's `toJSONSchema` writes it (the parts read here). */
interface Node {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Node[];
  oneOf?: Node[];
  properties?: Record<string, Node>;
  additionalProperties?: Node | boolean;
  items?: Node;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  pattern?: string;
  format?: string;
}

/** One documented key. */
export interface SettingRow {
  key: string;
  env: string;
  type: string;
  default: string;
  description: string;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function typeOf(n: Node): string {
  if (n.const !== undefined) return `\`${JSON.stringify(n.const)}\``;
  if (n.enum) return n.enum.map((v) => `\`${String(v)}\``).join(' | ');
  const alts = n.anyOf ?? n.oneOf;
  if (alts) return alts.map(typeOf).join(' or ');
  if (n.type === 'array') return `array of ${n.items ? typeOf(n.items) : 'any'}`;
  if (n.type === 'object') return n.properties ? 'object' : 'map';
  if (n.type === 'integer' || n.type === 'number') {
    const lo = n.minimum ?? (n.exclusiveMinimum !== undefined ? `>${n.exclusiveMinimum}` : undefined);
    const hi = n.maximum !== undefined && n.maximum < MAX_SAFE ? n.maximum : undefined;
    const range = lo !== undefined && hi !== undefined ? ` ${lo}..${hi}` : lo !== undefined ? ` ≥${lo}` : '';
    return `${n.type}${range.replace('≥>', '>')}`;
  }
  if (n.type === 'string' && n.format === 'uri') return 'URL';
  if (n.type === 'string' && n.pattern === '^0x[a-fA-F0-9]{40}$') return 'address';
  return Array.isArray(n.type) ? n.type.join(' or ') : (n.type ?? 'any');
}

function shown(v: unknown): string {
  if (v === undefined) return '';
  const s = JSON.stringify(v);
  return s.length > 60 ? '(see the description)' : `\`${s}\``;
}

/** The named variable of a key, else the generic override (`VAULTSTREAM__a__b`). */
function envOf(path: string[]): string {
  const named = Object.entries(ENV_KEYS).find(([, v]) => v.path.join('.') === path.join('.'))?.[0];
  const generic = `VAULTSTREAM__${path.map((p) => (p === '[]' ? '<i>' : p)).join('__')}`;
  return named ? `\`${named}\`, \`${generic}\`` : `\`${generic}\``;
}

/** The registry's vault entries are the specification's VaultInfo: one row per field, not their insides. */
const ONE_LEVEL = 'vaults[]';
const VAULT_INFO = "A field of the specification's VaultInfo, served as configured.";

function walk(n: Node, path: string[], out: SettingRow[], inherited: string): void {
  const key = path.join('.').replaceAll('.[]', '[]');
  const objects = (n.anyOf ?? n.oneOf ?? []).filter((a) => a.properties);
  const leaf = key.startsWith(`${ONE_LEVEL}.`);
  const props = leaf
    ? undefined
    : (n.properties ?? (objects.length === 1 ? objects[0].properties : undefined));
  const own = n.description ?? (leaf ? VAULT_INFO : undefined);
  const row = (): SettingRow => ({
    key,
    env: envOf(path),
    type: typeOf(n),
    default: shown(n.default),
    description: own ?? inherited,
  });
  const below = own ? `(see \`${key}\`)` : inherited;
  if (props) {
    if (path.length > 0 && own) out.push(row());
    for (const [k, child] of Object.entries(props)) walk(child, [...path, k], out, below);
    return;
  }
  if (!leaf && n.type === 'array' && n.items?.properties) {
    out.push(row());
    walk(n.items, [...path, '[]'], out, below);
    return;
  }
  out.push(row());
}

/** Every key of the schema, depth first, in declaration order. */
export function settingRows(schema: z.ZodType): SettingRow[] {
  const root = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Node;
  const out: SettingRow[] = [];
  walk(root, [], out, '');
  return out;
}

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** The Markdown page: one table per top-level section. */
export function settingsReference(schema: z.ZodType): string {
  const rows = settingRows(schema);
  const sections = new Map<string, SettingRow[]>();
  for (const r of rows) {
    const top = r.key.split(/[.[]/)[0];
    const section = r.key === top ? '(top level)' : top;
    sections.set(section, [...(sections.get(section) ?? []), r]);
  }
  const lines = [
    '# Configuration',
    '',
    '<!-- Generated from the zod schema (core/config.ts, core/settings/): `npm run docs:settings`. Do not edit. -->',
    '',
    'One file, `config/default.yaml` (or `--config FILE` / `VAULTSTREAM_CONFIG`), YAML or JSON, validated',
    'once at start; a bad value or an unknown key (at any depth) stops the start with a message naming',
    'the key. Any key can be overridden as `VAULTSTREAM__<key>__<subkey>=<value>` (JSON values are',
    'parsed); a `VAULTSTREAM__` variable that names no setting is an error too. A few keys also have a',
    'named variable.',
    '',
  ];
  for (const [section, list] of sections) {
    lines.push(
      `## ${section}`,
      '',
      '| key | type | default | environment | meaning |',
      '|---|---|---|---|---|',
    );
    for (const r of list) {
      lines.push(
        `| \`${r.key}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.env)} | ${cell(r.description)} |`,
      );
    }
    lines.push('');
  }
  return `${lines.join('\n')}`;
}
