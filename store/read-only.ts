/**
 * Read-only SQL for people and BI tools (the ClickHouse-compatible HTTP interface, which
 * `vaultstream sql` goes through too): a query runs only after the engine itself has parsed and
 * resolved it and both were checked, on an engine that holds nothing else to read
 * (store/read-only-engine.ts), with caps the client cannot lift. In order:
 *
 * 1. `formatQuerySingleLine` parses the text with ClickHouse's own parser: exactly one
 *    statement (a second one is a syntax error), comments gone. That canonical text is what
 *    is checked and what runs, so the checks and the execution see the same statement.
 * 2. `EXPLAIN AST` of it: the statement reads, has no SETTINGS clause or INTO OUTFILE, and calls
 *    only functions of values and listed table functions (store/read-only-ast.ts). Nothing of the
 *    query has been evaluated yet.
 * 3. `EXPLAIN QUERY TREE` of its SELECT: every table, table function, function and path column
 *    the engine resolved is allowed (store/read-only-tree.ts).
 * 4. The caps in force for it are read back from the engine (`getSetting` with the statement's
 *    own SETTINGS, on its session): none may be "no limit" or above the server's.
 */
import { VaultstreamError } from '../core/errors.ts';
import { checkAst, checkNoSettings, type QueryScope } from './read-only-ast.ts';
import type { FunctionCatalog, Lines } from './read-only-functions.ts';
import { checkTree } from './read-only-tree.ts';

/** Caps on one read-only query. */
export interface QueryLimits {
  /** Seconds before the engine cancels the query (`max_execution_time`). */
  maxExecutionTimeSeconds: number;
  /** Rows in the result (`max_result_rows`); more is an error unless the client asks for a cut. */
  maxResultRows: number;
  /** Bytes of the answer as formatted (`max_result_bytes`, also counted on what is sent). */
  maxResultBytes: number;
  /** Memory the query may use (`max_memory_usage`). */
  maxMemoryUsageBytes: number;
  /** Engine threads the query may use (`max_threads`). */
  maxThreads: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxExecutionTimeSeconds: 30,
  maxResultRows: 1_000_000,
  maxResultBytes: 256 * 1024 * 1024,
  maxMemoryUsageBytes: 2 * 1024 * 1024 * 1024,
  maxThreads: 1,
};

/** The engine setting of each cap. */
export const CAP_SETTINGS: Record<keyof QueryLimits, string> = {
  maxExecutionTimeSeconds: 'max_execution_time',
  maxResultRows: 'max_result_rows',
  maxResultBytes: 'max_result_bytes',
  maxMemoryUsageBytes: 'max_memory_usage',
  maxThreads: 'max_threads',
};

/** A statement that passed the checks, ready to run. */
export interface CheckedQuery {
  /** The canonical single-line statement (with its own FORMAT clause, if it had one). */
  canonical: string;
  /** The FORMAT the statement names itself, if any. */
  format?: string;
  /** The statement's kind (root node of its syntax tree), e.g. `SelectWithUnionQuery`. */
  kind: string;
}

/**
 * Parses `query` with the engine, checks it and what the engine resolves it to, and returns the
 * canonical statement. Throws READ_ONLY for anything refused and the engine's own error (through
 * sqlError) for SQL it cannot parse or resolve. `params` are the query's `{name:Type}` values,
 * which the engine's EXPLAIN needs too.
 */
export async function checkReadOnly(
  lines: Lines,
  query: string,
  scope: QueryScope,
  catalog: FunctionCatalog,
  params?: Record<string, string>,
): Promise<CheckedQuery> {
  const engine = async (sql: string, p?: Record<string, string>) => {
    try {
      return await lines(sql, p);
    } catch (err) {
      throw sqlError(err);
    }
  };
  const [canonical] = await engine('SELECT formatQuerySingleLine({vs_query:String})', { vs_query: query });
  if (!canonical) throw new VaultstreamError('BAD_INPUT', 'empty query');
  checkNoSettings(canonical);
  const ast = checkAst(await engine(`EXPLAIN AST ${canonical}`, params), canonical, scope, catalog);
  if (ast.resolve)
    checkTree(await engine(`EXPLAIN QUERY TREE ${ast.resolve}`, params), scope.served, catalog);
  return { canonical, format: ast.format, kind: ast.kind };
}

/**
 * The caps the engine holds for a statement run with `settings` (its SETTINGS clause, as the
 * server appends it) on the session `lines` queries: each read back with getSetting under the same
 * clause. Refused when one is 0 (no limit to the engine) or above the server's, and when the
 * session is not read-only.
 */
export async function readBackCaps(
  lines: Lines,
  settings: string,
  limits: QueryLimits,
): Promise<QueryLimits> {
  const keys = Object.keys(CAP_SETTINGS) as (keyof QueryLimits)[];
  const select = [
    ...keys.map((k) => `toString(getSetting('${CAP_SETTINGS[k]}'))`),
    "toString(getSetting('readonly'))",
  ];
  let row: string;
  try {
    [row] = await lines(
      `SELECT concatWithSeparator('\t', ${select.join(', ')})${settings ? ` SETTINGS ${settings}` : ''}`,
    );
  } catch (err) {
    throw sqlError(err);
  }
  const values = (row ?? '').split('\t').map(Number);
  const readonly = values.pop();
  if (readonly !== 2)
    throw new VaultstreamError('READ_ONLY', 'the session is not read-only: refusing to run the query', {
      details: { clickhouseCode: 164 },
    });
  const caps = {} as QueryLimits;
  for (const [i, k] of keys.entries()) {
    const v = values[i];
    if (!Number.isFinite(v) || v <= 0 || v > limits[k])
      throw new VaultstreamError(
        'READ_ONLY',
        `${CAP_SETTINGS[k]} would be ${Number.isFinite(v) ? v : 'unreadable'} for this query${v === 0 ? ' (no limit)' : ''}: the server's cap is ${limits[k]}`,
        { details: { clickhouseCode: 164 } },
      );
    caps[k] = v;
  }
  return caps;
}

/** ClickHouse error codes a person's SQL can cause, by the error code the CLI and HTTP report. */
const USER_SQL_CODES: Record<number, string> = {
  62: 'SYNTAX_ERROR',
  46: 'UNKNOWN_FUNCTION',
  47: 'UNKNOWN_IDENTIFIER',
  60: 'UNKNOWN_TABLE',
  81: 'UNKNOWN_DATABASE',
  16: 'NO_SUCH_COLUMN_IN_TABLE',
  43: 'ILLEGAL_TYPE_OF_ARGUMENT',
  42: 'NUMBER_OF_ARGUMENTS_DOESNT_MATCH',
  53: 'TYPE_MISMATCH',
  73: 'UNKNOWN_FORMAT',
  159: 'TIMEOUT_EXCEEDED',
  164: 'READONLY',
  241: 'MEMORY_LIMIT_EXCEEDED',
  396: 'TOO_MANY_ROWS_OR_BYTES',
};

/** The ClickHouse error code of an engine error (chDB's `clickhouseCode`, the client's `code`). */
export function clickhouseCodeOf(err: unknown): number | undefined {
  for (
    let e = err as { code?: unknown; clickhouseCode?: unknown; cause?: unknown } | undefined, d = 0;
    e && d < 6;
    d++
  ) {
    const c = e.clickhouseCode ?? e.code;
    if (typeof c === 'number') return c;
    if (typeof c === 'string' && /^\d+$/.test(c)) return Number(c);
    const m = /Code: (\d+)\./.exec((e as Error).message ?? '');
    if (m) return Number(m[1]);
    e = e.cause as typeof e;
  }
  return undefined;
}

/**
 * An engine error caused by the query (syntax, unknown table, a cap reached) as a user
 * mistake with ClickHouse's code and message; anything else is left as it is.
 */
export function sqlError(err: unknown): unknown {
  const code = clickhouseCodeOf(err);
  if (code === undefined || !(code in USER_SQL_CODES)) return err;
  const raw = err instanceof Error ? err.message : String(err);
  // chDB prefixes "Query failed: Code: N. DB::Exception: "; keep ClickHouse's own sentence.
  const message = raw
    .replace(/^Query failed: /, '')
    .replace(/^Code: \d+\. DB::Exception: /, '')
    .split('\n')[0];
  const kind =
    code === 159 ? 'TIMEOUT' : code === 164 ? 'READ_ONLY' : code === 62 ? 'SQL_SYNTAX' : 'BAD_INPUT';
  return new VaultstreamError(kind, `${USER_SQL_CODES[code]}: ${message}`, {
    cause: err,
    details: { clickhouseCode: code, clickhouseName: USER_SQL_CODES[code] },
  });
}
