/**
 * Which functions a read-only query may call: decided by the engine's own description of each
 * function (`system.functions`: its categories, its aliases, whether its name is
 * case-insensitive, whether it is an aggregate; `system.aggregate_function_combinators`), read
 * from the engine that runs the query. A function passes when every category the engine gives it
 * is one of SAFE_FUNCTION_CATEGORIES (functions of values: arithmetic, strings, dates, JSON,
 * hashes, aggregates...), or when store/read-only-rules.ts names it in OTHER_FUNCTIONS (the
 * engine's "Other" category mixes functions of values with functions that show the server
 * itself, so only those named there pass). Anything else is refused, whatever new function a
 * later engine adds: it passes only once it is in a category of values or named here.
 */
import { OTHER_FUNCTIONS, SAFE_FUNCTION_CATEGORIES, SYNTAX_FUNCTIONS } from './read-only-rules.ts';

/** Runs a query on the engine and returns one string column's values, row by row. */
export type Lines = (sql: string, params?: Record<string, string>) => Promise<string[]>;

interface Described {
  name: string;
  aliasTo: string;
  categories: string[];
  caseInsensitive: boolean;
  aggregate: boolean;
}

export interface FunctionCatalog {
  /** The engine's own name of the function a query calls `name`, or undefined when it has none. */
  resolve(name: string): string | undefined;
  /** Whether a query may call the function it writes `name` (a combinator's base decides for it). */
  allowed(name: string): boolean;
  /** Whether the engine describes `name` as one of its internal functions (the analyzer adds them). */
  internal(name: string): boolean;
}

/** The catalog from rows of `system.functions` and the combinators' names. */
export function functionCatalog(rows: Described[], combinators: string[]): FunctionCatalog {
  const exact = new Map(rows.map((r) => [r.name, r]));
  const folded = new Map(rows.filter((r) => r.caseInsensitive).map((r) => [r.name.toLowerCase(), r]));
  // Longest first: `MergeState` before `State`.
  const suffixes = [...combinators].sort((a, b) => b.length - a.length);
  const find = (name: string): Described | undefined => exact.get(name) ?? folded.get(name.toLowerCase());
  const base = (d: Described): Described => {
    let at = d;
    for (let i = 0; i < 4 && at.aliasTo; i++) at = find(at.aliasTo) ?? at;
    return at;
  };
  /** The described function `name` is, directly or as an aggregate with combinators. */
  const lookup = (name: string, depth = 0): Described | undefined => {
    const direct = find(name);
    if (direct) return base(direct);
    if (depth > 6) return undefined;
    for (const s of suffixes) {
      if (name.length <= s.length || !name.endsWith(s)) continue;
      const inner = lookup(name.slice(0, -s.length), depth + 1);
      if (inner?.aggregate) return inner;
    }
    return undefined;
  };
  const safe = (d: Described) =>
    OTHER_FUNCTIONS.has(d.name) ||
    (d.categories.length > 0 && d.categories.every((c) => SAFE_FUNCTION_CATEGORIES.has(c)));
  return {
    resolve: (name) => lookup(name)?.name,
    allowed: (name) => {
      if (SYNTAX_FUNCTIONS.has(name.toLowerCase())) return true;
      const d = lookup(name);
      return d !== undefined && safe(d);
    },
    internal: (name) => {
      const d = lookup(name);
      return d?.categories.includes('Internal') ?? false;
    },
  };
}

/** The catalog of the engine `lines` queries. */
export async function readFunctionCatalog(lines: Lines): Promise<FunctionCatalog> {
  const rows = (
    await lines(
      'SELECT toJSONString((name, alias_to, categories, case_insensitive, is_aggregate)) FROM system.functions',
    )
  ).map((l) => {
    const [name, aliasTo, categories, ci, agg] = JSON.parse(l) as [string, string, string, number, number];
    return {
      name,
      aliasTo,
      categories: categories ? categories.split(/,\s*/) : [],
      caseInsensitive: ci === 1,
      aggregate: agg === 1,
    };
  });
  const combinators = await lines('SELECT name FROM system.aggregate_function_combinators');
  return functionCatalog(rows, combinators);
}
