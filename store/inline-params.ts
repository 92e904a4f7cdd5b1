/**
 * The service's own query parameters written into its SQL as typed literals, for the embedded
 * engine. chdb-node binds parameters one query at a time across the whole process
 * (`globalParamChain` in node_modules/chdb/index.js: libchdb's binding is not safe in parallel),
 * so a bound statement of the service waited behind an analyst's bound query on the SQL
 * interface, however long it ran (docs/architecture.md#embedded-store-connections). Written as
 * literals, the service's statements bind nothing and run on their own connection. The engine
 * substitutes a parameter the same way: the value as a literal converted to the placeholder's
 * type, `_CAST(<literal>, '<type>')` (ClickHouse's ReplaceQueryParameterVisitor).
 */
import { VaultstreamError } from '../core/errors.ts';
import { literal } from './tsv.ts';

/** `{name:Type}`: a parameter placeholder (a type may hold parentheses, commas and quotes, no braces). */
const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g;

/**
 * A parameter's value as `literal` takes it: a Date as @clickhouse/client sends one (whole Unix
 * seconds, time-zone agnostic); refused when it has no literal of a parameter's kind (a
 * non-finite number, an object that is not an array).
 */
function plain(value: unknown, name: string): unknown {
  if (typeof value === 'number' && !Number.isFinite(value))
    throw new VaultstreamError('INTERNAL', `query parameter ${name} is not a finite number: ${value}`);
  if (value instanceof Date) return String(Math.floor(value.getTime() / 1000));
  if (Array.isArray(value)) return value.map((v) => plain(v, name));
  if (value !== null && typeof value === 'object')
    throw new VaultstreamError('INTERNAL', `query parameter ${name} has no SQL literal (${typeof value})`);
  return value;
}

/**
 * `sql` with each `{name:Type}` whose name is in `params` replaced by its value, typed. A
 * placeholder without a value is left for the engine to refuse, as it would when binding.
 */
export function inlineParams(sql: string, params?: Record<string, unknown>): string {
  if (!params || Object.keys(params).length === 0) return sql;
  return sql.replace(PLACEHOLDER, (whole, name: string, type: string) =>
    Object.hasOwn(params, name) ? `_CAST(${literal(plain(params[name], name))}, ${literal(type)})` : whole,
  );
}
