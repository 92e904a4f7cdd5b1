/**
 * Read-only SQL for people and BI tools (`vaultstream sql`, the ClickHouse-compatible HTTP
 * interface): a query runs only after the engine itself has parsed it and the server has
 * checked its syntax tree, and it runs with caps the client cannot lift.
 *
 * ClickHouse's `readonly` setting is not enough on its own. Measured on chDB 26.x:
 * `readonly=2` lets `file()` read any file, `INSERT INTO FUNCTION file()/url()` write files
 * and send requests, and a query's own `SETTINGS` lift it; even `readonly=1` lets the scalar
 * `file('/etc/passwd')` read a file and `INTO OUTFILE` write one, and chDB runs several
 * `;`-separated statements in one call. So, in order:
 *
 * 1. `formatQuerySingleLine` parses the text with ClickHouse's own parser: exactly one
 *    statement (a second one is a syntax error), comments gone. That canonical text is what
 *    is checked and what runs, so the check and the execution see the same statement.
 * 2. `EXPLAIN AST` of the canonical text gives the tree. Allowed: SELECT (with UNION,
 *    INTERSECT, EXCEPT, subqueries, CTEs), SHOW, DESCRIBE, EXISTS, SHOW CREATE and EXPLAIN of
 *    those. Refused: any other statement anywhere in the tree, any `SETTINGS` clause, table
 *    functions outside a short list that reads nothing outside the database (`numbers`,
 *    `values`, `merge`, ...), and functions that reach files, URLs or other servers wherever
 *    they appear. `INTO OUTFILE` is found on the canonical text's tokens.
 * 3. The statement runs with `readonly=1` (no setting can be changed, no table function that
 *    the engine deems unsafe) and the time, result and memory caps, appended by the server.
 */
import { VaultstreamError } from '../core/errors.ts';
import type { Store } from './client.ts';
import {
  FORMAT_FUNCTIONS,
  isOutputFormat,
  OTHER_DATABASES,
  PATH_COLUMNS,
  PATH_TABLES,
  REFUSED_FUNCTIONS,
  SYSTEM_TABLES,
  TABLE_FUNCTIONS,
} from './read-only-rules.ts';
import { literal } from './tsv.ts';

/** Caps on one read-only query. */
export interface QueryLimits {
  /** Seconds before the engine cancels the query (`max_execution_time`). */
  maxExecutionTimeSeconds: number;
  /** Rows in the result (`max_result_rows`); more is an error, never a silent cut. */
  maxResultRows: number;
  /** Bytes in the uncompressed result (`max_result_bytes`). */
  maxResultBytes: number;
  /** Memory the query may use (`max_memory_usage`). */
  maxMemoryUsageBytes: number;
  /** Engine threads the query may use (`max_threads`): the service's queries keep the rest. */
  maxThreads: number;
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = {
  maxExecutionTimeSeconds: 30,
  maxResultRows: 1_000_000,
  maxResultBytes: 256 * 1024 * 1024,
  maxMemoryUsageBytes: 2 * 1024 * 1024 * 1024,
  maxThreads: 1,
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

/** Runs a query on the store and returns one string column's values, row by row. */
export type Lines = (sql: string) => Promise<string[]>;

/**
 * `Lines` over the store (`background`: on the analysts' connection, as their SQL runs; `params`:
 * the values of the query's `{name:Type}` parameters, which the engine's EXPLAIN needs too).
 */
export function storeLines(store: Store, background = false, params?: Record<string, string>): Lines {
  return async (sql) => {
    const text = (await store.queryRaw(sql, { format: 'TSVRaw', background, params })).bytes.toString('utf8');
    return text === '' ? [] : text.replace(/\n$/, '').split('\n');
  };
}

/** Statements that only read. */
const READ_ROOTS =
  /^(SelectWithUnionQuery|SelectIntersectExceptQuery|SelectQuery|ShowTables|ShowColumns|ShowFunctions|ShowIndexes|DescribeQuery|Exists\w*Query|ShowCreate\w*Query|Explain)$/;
/** Query nodes that may appear inside a read statement (subqueries, EXPLAIN's operand). */
const READ_QUERY_NODES =
  /^(SelectWithUnionQuery|SelectIntersectExceptQuery|SelectQuery|Subquery|TablesInSelectQuery)$/;

function refused(message: string, details: Record<string, unknown> = {}): VaultstreamError {
  return new VaultstreamError('READ_ONLY', message, { details: { clickhouseCode: 164, ...details } });
}

interface AstLine {
  depth: number;
  node: string;
  arg: string;
}

function parseAst(lines: string[]): AstLine[] {
  return lines
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const depth = l.length - l.trimStart().length;
      const [node, ...rest] = l.trim().split(/\s+/);
      return { depth, node, arg: rest.join(' ') };
    });
}

/** The first word after `Function`, without the ` (alias x)`/`(children n)` suffixes. */
function functionName(arg: string): string {
  return arg.split(/[\s(]/)[0];
}

/** The canonical text's words outside string literals and quoted identifiers, upper-cased. */
export function sqlWords(sql: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === '`') {
      i++;
      while (i < sql.length && sql[i] !== c) i += sql[i] === '\\' ? 2 : 1;
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j])) j++;
      words.push(sql.slice(i, j).toUpperCase());
      i = j;
    } else i++;
  }
  return words;
}

/** Statements that read no table's rows: their tables may be any the engine has. */
const SCHEMA_ROOTS =
  /^(ShowTables|ShowColumns|ShowFunctions|ShowIndexes|DescribeQuery|Exists\w*Query|ShowCreate\w*Query)$/;

/** Refuses an output format outside store/read-only-rules.ts OUTPUT_FORMATS. */
export function checkFormat(format: string): string {
  if (!isOutputFormat(format))
    throw refused(
      `output format ${format} is not allowed here: it reads a schema or template from a file or a registry, or is no result format`,
      { format },
    );
  return format;
}

/** The databases of a query: the one its unqualified names resolve to, and the service's own. */
export interface QueryScope {
  current: string;
  served: string;
}

/**
 * Checks a syntax tree (`EXPLAIN AST` lines); throws READ_ONLY naming the first thing refused.
 * With a `scope`, the tables a query reads rows of must be the service's, or listed ones.
 */
export function checkAst(lines: string[], canonical: string, scope?: QueryScope): CheckedQuery {
  const ast = parseAst(lines);
  if (ast.length === 0) throw refused('empty query');
  const root = ast[0];
  if (!READ_ROOTS.test(root.node))
    throw refused(
      `only SELECT, SHOW, DESCRIBE, EXISTS and EXPLAIN are allowed here (read-only); this is a ${statementName(root.node, canonical)} statement`,
      { statement: root.node },
    );
  const readsRows = !SCHEMA_ROOTS.test(root.node);
  /** Node names by depth, to know a node's parent. */
  const path: string[] = [];
  let pathTable = false;
  let wholeRow = false;
  for (const [i, n] of ast.entries()) {
    path.length = n.depth;
    const parent = path[n.depth - 1];
    path[n.depth] = n.node;
    if (n.node === 'Set')
      throw refused(
        'a SETTINGS clause is not allowed: the server sets the limits (time, rows, memory) of read-only queries',
      );
    if (n !== root && n.node.endsWith('Query') && !READ_QUERY_NODES.test(n.node))
      throw refused(`only read statements are allowed here; the query contains a ${n.node}`, {
        statement: n.node,
      });
    if (n.node === 'Function') {
      const name = functionName(n.arg);
      const lower = name.toLowerCase();
      if (REFUSED_FUNCTIONS.test(lower))
        throw refused(
          `${name}() reaches outside the database (files, URLs, other servers, the server's own paths and settings): not allowed here`,
          { function: name },
        );
      if (parent === 'TableExpression' && !TABLE_FUNCTIONS.has(lower))
        throw refused(
          `table function ${name}() is not allowed here; allowed: ${[...TABLE_FUNCTIONS].join(', ')}`,
          { function: name },
        );
      // Its first argument: ExpressionList at depth + 1, then the first node at depth + 2.
      const first = ast[i + 2];
      const literal =
        first?.depth === n.depth + 2 && first.node === 'Literal'
          ? /^'(\w+)'$/.exec(first.arg)?.[1]
          : undefined;
      if (FORMAT_FUNCTIONS.test(lower)) {
        if (!literal)
          throw refused(`${name}() takes a format name as a plain string here`, { function: name });
        checkFormat(literal);
      }
      const mergeDb = literal?.toLowerCase();
      if (lower === 'merge' && (!mergeDb || mergeDb === 'system' || (scope && literal !== scope.served)))
        throw refused("merge() reads only the service's database here, named as a plain string", {
          function: name,
        });
    }
    if (readsRows && scope && n.node === 'TableIdentifier') {
      const name = n.arg.split(' ')[0];
      const dot = name.indexOf('.');
      const db = dot < 0 ? scope.current : name.slice(0, dot);
      const table = dot < 0 ? name : name.slice(dot + 1);
      checkTable(db, table, scope.served);
      if (db === 'system' && PATH_TABLES.has(table)) pathTable = true;
    }
    if (/^(Asterisk|QualifiedAsterisk|Columns\w*Matcher|QualifiedColumns\w*Matcher)$/.test(n.node))
      wholeRow = true;
    if (n.node === 'Identifier' && PATH_COLUMNS.test(n.arg.split(' ')[0]) && !onlyEmptiness(ast, i))
      throw refused(`column ${n.arg.split(' ')[0]} holds the server's paths: not readable here`);
  }
  if (pathTable && wholeRow)
    throw refused(
      "system.tables and system.databases hold the server's paths: name their columns (database, name, engine, ...) instead of * or COLUMNS()",
    );
  const words = sqlWords(canonical);
  for (let i = 0; i + 1 < words.length; i++)
    if (words[i] === 'INTO' && words[i + 1] === 'OUTFILE')
      throw refused('INTO OUTFILE writes a file on the server: not allowed here');
  // A query-with-output's FORMAT is the root's last child, an Identifier, and the text's last words.
  const last = ast.filter((n) => n.depth === 1).at(-1);
  const format =
    last?.node === 'Identifier' && words.at(-2) === 'FORMAT' && words.at(-1) === last.arg.toUpperCase()
      ? checkFormat(last.arg)
      : undefined;
  return { canonical, format, kind: root.node };
}

/** A table the query reads rows of: the service's database, an empty or schema database, or a listed system table. */
function checkTable(db: string, table: string, served: string): void {
  const lower = db.toLowerCase();
  if (lower === 'system') {
    if (SYSTEM_TABLES.has(table)) return;
    throw refused(
      `system.${table} is not readable here; system tables readable: ${[...SYSTEM_TABLES].join(', ')}`,
      { table: `system.${table}` },
    );
  }
  if (db === served || OTHER_DATABASES.has(lower)) return;
  throw refused(`table ${db}.${table} is outside the databases this interface serves`, {
    table: `${db}.${table}`,
  });
}

function statementName(node: string, canonical: string): string {
  if (node === 'Set') return 'SET';
  const first = sqlWords(canonical)[0];
  return first ?? node;
}

/**
 * Parses `query` with the engine, checks it, and returns the canonical statement. Throws
 * READ_ONLY for anything refused and BAD_INPUT for SQL the engine cannot parse (one statement
 * only: a second statement is a syntax error).
 */
export async function checkReadOnly(lines: Lines, query: string, scope?: QueryScope): Promise<CheckedQuery> {
  let canonical: string;
  try {
    [canonical] = await lines(`SELECT formatQuerySingleLine(${literal(query)})`);
  } catch (err) {
    throw sqlError(err);
  }
  if (!canonical) throw new VaultstreamError('BAD_INPUT', 'empty query');
  let ast: string[];
  try {
    ast = await lines(`EXPLAIN AST ${canonical}`);
  } catch (err) {
    throw sqlError(err);
  }
  return checkAst(ast, canonical, scope);
}

/** The SETTINGS clause that caps a read-only query. */
export function limitSettings(limits: QueryLimits): string {
  return [
    'readonly = 1',
    `max_execution_time = ${limits.maxExecutionTimeSeconds}`,
    "timeout_overflow_mode = 'throw'",
    `max_result_rows = ${limits.maxResultRows}`,
    `max_result_bytes = ${limits.maxResultBytes}`,
    "result_overflow_mode = 'throw'",
    `max_memory_usage = ${limits.maxMemoryUsageBytes}`,
    // Not os_thread_priority: without CAP_SYS_NICE the engine cannot set a thread back to 0 after
    // the query, and the thread (a pool or libuv one) runs the service's later queries at nice 19.
    `max_threads = ${limits.maxThreads}`,
    // Smaller blocks than the engine's 65,536 rows: an analyst query yields to a service query
    // (query priority, store/client.ts) and sees a cancellation sooner.
    'max_block_size = 8192',
  ].join(', ');
}

/**
 * The statement to run: the canonical text, a FORMAT when it names none (`defaultFormat`),
 * then the caps. ClickHouse reads a SETTINGS clause after FORMAT, so the query's own FORMAT
 * stays where it is.
 */
export function limitedSql(q: CheckedQuery, limits: QueryLimits, defaultFormat?: string): string {
  const format = q.format === undefined && defaultFormat ? ` FORMAT ${defaultFormat}` : '';
  return `${q.canonical}${format} SETTINGS ${limitSettings(limits)}`;
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

/**
 * Whether the node at `i` is the only argument of empty() / notEmpty(): that says whether a table
 * has data on disk, not where (the JDBC v2 driver's getTables, which DBeaver runs to browse
 * a schema, tells tables from remote ones by `empty(t.data_paths)`).
 */
function onlyEmptiness(ast: { depth: number; node: string; arg: string }[], i: number): boolean {
  const depth = ast[i]?.depth ?? 0;
  let list = i - 1;
  while (list >= 0 && (ast[list]?.depth ?? 0) >= depth) list--;
  const fn = ast[list - 1];
  const siblings = ast.slice(list + 1).findIndex((n) => n.depth < depth);
  const args = ast
    .slice(list + 1, siblings < 0 ? undefined : list + 1 + siblings)
    .filter((n) => n.depth === depth);
  return (
    ast[list]?.node === 'ExpressionList' &&
    fn?.depth === depth - 2 &&
    fn.node === 'Function' &&
    /^(empty|notEmpty)$/i.test(fn.arg.split(' ')[0] ?? '') &&
    args.length === 1
  );
}
