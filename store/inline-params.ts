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

/** `{name:Type}`: a parameter placeholder (a type may hold parentheses, commas and quotes, no braces). */
const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g;

/** A quoted string literal: backslash and quote escaped (any other character stands for itself). */
function quote(s: string): string {
  return `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** The SQL literal of a parameter's value: strings, finite numbers, bigints, booleans, Dates, null and arrays of these. */
export function literal(value: unknown, name: string): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new VaultstreamError('INTERNAL', `query parameter ${name} is not a finite number: ${value}`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  // As @clickhouse/client sends a Date: whole Unix seconds, time-zone agnostic.
  if (value instanceof Date) return quote(String(Math.floor(value.getTime() / 1000)));
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, name)).join(', ')}]`;
  throw new VaultstreamError('INTERNAL', `query parameter ${name} has no SQL literal (${typeof value})`);
}

/**
 * `sql` with each `{name:Type}` whose name is in `params` replaced by its value, typed. A
 * placeholder without a value is left for the engine to refuse, as it would when binding.
 */
export function inlineParams(sql: string, params?: Record<string, unknown>): string {
  if (!params || Object.keys(params).length === 0) return sql;
  return sql.replace(PLACEHOLDER, (whole, name: string, type: string) =>
    Object.hasOwn(params, name) ? `_CAST(${literal(params[name], name)}, ${quote(type)})` : whole,
  );
}
