/**
 * The first check of a read-only query, on its syntax tree (`EXPLAIN AST` of the canonical text),
 * before the engine resolves or evaluates anything of it: the statement is one that reads; it has
 * no SETTINGS clause and no INTO OUTFILE; every function it calls is one the engine describes as
 * a function of values (store/read-only-functions.ts), every table function one of
 * TABLE_FUNCTIONS; and it says which SELECT the engine must resolve for the second check
 * (store/read-only-tree.ts). The order matters: resolving a statement evaluates its constant
 * parts (scalar subqueries, table functions' arguments), so nothing may be resolved that calls a
 * function this check refuses.
 *
 * SHOW statements are the one place the tree does not show what they hold (`EXPLAIN AST` of `SHOW
 * TABLES LIKE 'x' LIMIT (SELECT ...)` prints `ShowTables` alone), so they pass only in the forms
 * SHOW_FORMS lists, which hold names, a pattern and a number, and nothing to evaluate.
 */
import { VaultstreamError } from '../core/errors.ts';
import type { FunctionCatalog } from './read-only-functions.ts';
import {
  COLUMN_CLAUSES,
  FORMAT_FUNCTIONS,
  isOutputFormat,
  OTHER_DATABASES,
  STRUCTURE_FUNCTIONS,
  SYSTEM_TABLES,
  TABLE_FUNCTIONS,
} from './read-only-rules.ts';

/** The databases of a query: the one its unqualified names resolve to, and the service's own. */
export interface QueryScope {
  current: string;
  served: string;
}

/** What the syntax check found. */
export interface AstCheck {
  /** The statement's kind (root node of its syntax tree), e.g. `SelectWithUnionQuery`. */
  kind: string;
  /** The FORMAT the statement names itself, if any. */
  format?: string;
  /** The SELECT whose resolution shows what the statement reads (none: it names tables only). */
  resolve?: string;
}

/** Statements that only read. */
const READ_ROOTS =
  /^(SelectWithUnionQuery|SelectIntersectExceptQuery|SelectQuery|ShowTables|ShowColumns|ShowFunctions|ShowIndexes|DescribeQuery|Exists\w*Query|ShowCreate\w*Query|Explain)$/;
/** Query nodes that may appear inside a read statement (subqueries, EXPLAIN's operand). */
const READ_QUERY_NODES =
  /^(SelectWithUnionQuery|SelectIntersectExceptQuery|SelectQuery|Subquery|TablesInSelectQuery)$/;
const SELECTS = /^(SelectWithUnionQuery|SelectIntersectExceptQuery|SelectQuery)$/;

const NAME = String.raw`(?:[A-Za-z_][A-Za-z0-9_]*|\x60(?:[^\x60\\]|\\.)*\x60)`;
const STRING = String.raw`'(?:[^'\\]|\\.)*'`;
const FORMAT = '(?: FORMAT [A-Za-z0-9_]+)?';
const PATTERN = `(?: (?:NOT )?I?LIKE ${STRING})?`;
const LIMIT = String.raw`(?: LIMIT \d{1,18})?`;

/** The SHOW statements accepted, as the engine's formatter writes them (names, a pattern, a number). */
const SHOW_FORMS: RegExp[] = [
  new RegExp(`^SHOW (?:TABLES|DICTIONARIES)(?: FROM (?<db>${NAME}))?${PATTERN}${LIMIT}${FORMAT}$`),
  new RegExp(`^SHOW (?:DATABASES|FUNCTIONS)${PATTERN}${LIMIT}${FORMAT}$`),
  new RegExp(
    `^SHOW (?:EXTENDED )?(?:FULL )?(?:COLUMNS|INDEXES|KEYS) FROM (?<table>${NAME})(?: FROM (?<db>${NAME}))?${PATTERN}${LIMIT}${FORMAT}$`,
  ),
];
/** EXISTS and SHOW CREATE of one object. */
const OBJECT_FORM = new RegExp(
  `^(?:EXISTS|SHOW CREATE) (?:TEMPORARY )?(?<what>TABLE|VIEW|DICTIONARY|DATABASE) (?<first>${NAME})(?:\\.(?<second>${NAME}))?${FORMAT}$`,
);
/** EXPLAIN's kinds that take a SELECT, without options. */
const EXPLAIN_FORM = /^EXPLAIN (?:(?:AST|SYNTAX|QUERY TREE|PLAN|PIPELINE|ESTIMATE) )?(?=SELECT |WITH |\()/;
const DESCRIBE_PREFIX = 'DESCRIBE TABLE ';

export function refused(message: string, details: Record<string, unknown> = {}): VaultstreamError {
  return new VaultstreamError('READ_ONLY', message, { details: { clickhouseCode: 164, ...details } });
}

interface AstLine {
  depth: number;
  node: string;
  arg: string;
}

function parseAst(lines: string[]): AstLine[] {
  const out: AstLine[] = [];
  for (const l of lines) {
    const text = l.trimStart();
    if (text === '') continue;
    const sp = text.indexOf(' ');
    out.push({
      depth: l.length - text.length,
      node: sp < 0 ? text : text.slice(0, sp),
      arg: sp < 0 ? '' : text.slice(sp + 1),
    });
  }
  return out;
}

/** The first word after `Function`, without the ` (alias x)`/`(children n)` suffixes. */
function functionName(arg: string): string {
  return arg.split(/[\s(]/)[0];
}

/** A name as the formatter writes it, without its backquotes. */
function unquote(name: string): string {
  return name.startsWith('`') ? name.slice(1, -1).replace(/\\(.)/g, '$1') : name;
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

/**
 * Refuses a quoted name (identifier or alias, \x60...\x60 or "...") with a control character or
 * `: `: the engine prints names as they are in its trees, and store/read-only-tree.ts reads a tree
 * as lines of `field: value` pairs.
 */
function checkNames(sql: string): void {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c !== "'" && c !== '"' && c !== '`') {
      i++;
      continue;
    }
    let j = i + 1;
    let text = '';
    while (j < sql.length && sql[j] !== c) {
      if (sql[j] === '\\') {
        const e = sql[j + 1] ?? '';
        text += { n: '\n', r: '\r', t: '\t', '0': '\0', b: '\b', f: '\f' }[e] ?? e;
        j += 2;
      } else text += sql[j++];
    }
    const control = [...text].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
    if (c !== "'" && (control || text.includes(': ')))
      throw refused('a quoted name may not hold control characters or ": " here');
    i = j + 1;
  }
}

const settingsRefused = () =>
  refused(
    'a SETTINGS clause is not allowed (nor EXPLAIN options): the server sets the limits of read-only queries; a client lowers them with URL parameters',
  );

/**
 * Refuses a SETTINGS clause (`SETTINGS name = value`) in the canonical text, before the engine
 * parses the statement again for its tree: `EXPLAIN AST` applies a query's own settings.
 */
export function checkNoSettings(canonical: string): void {
  const bare = canonical.replace(/'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"/g, ' x ');
  if (/(^|[\s(])SETTINGS\s+[A-Za-z_][A-Za-z0-9_]*\s*=/i.test(bare)) throw settingsRefused();
}

/** Refuses an output format outside store/read-only-rules.ts OUTPUT_FORMATS. */
export function checkFormat(format: string): string {
  if (!isOutputFormat(format))
    throw refused(
      `output format ${format.slice(0, 64)} is not allowed here: it reads a schema or template from a file or a registry, or is no result format`,
    );
  return format;
}

/** A table the statement names: the service's database, an empty or schema database, or a listed system table. */
export function checkTable(db: string, table: string, served: string): void {
  if (db === 'system') {
    if (SYSTEM_TABLES.has(table)) return;
    throw refused(
      `system.${table.slice(0, 100)} is not readable here; system tables readable: ${[...SYSTEM_TABLES].join(', ')}`,
      { table: `system.${table}` },
    );
  }
  if (db === served || OTHER_DATABASES.has(db)) return;
  throw refused(
    `table ${db.slice(0, 100)}.${table.slice(0, 100)} is outside the databases this interface serves`,
    {
      table: `${db}.${table}`,
    },
  );
}

/** A database the statement names. */
export function checkDatabase(db: string, served: string): void {
  if (db === served || db === 'system' || OTHER_DATABASES.has(db)) return;
  throw refused(`database ${db.slice(0, 100)} is outside the databases this interface serves`);
}

function statementName(canonical: string): string {
  return sqlWords(canonical)[0] ?? 'unknown';
}

/** The value of the string literal a `Literal` node prints (`'a\'b'`), or undefined for other literals. */
function stringLiteral(arg: string): string | undefined {
  const m = /^'((?:[^'\\]|\\.)*)'/.exec(arg);
  return m ? m[1].replace(/\\(.)/g, '$1') : undefined;
}

/** Checks one `Function` node (`i` in `ast`) called from `parent`. */
function checkFunction(
  ast: AstLine[],
  i: number,
  parent: string | undefined,
  scope: QueryScope,
  catalog: FunctionCatalog,
): void {
  const n = ast[i];
  const name = functionName(n.arg);
  const lower = name.toLowerCase();
  // Its first argument: ExpressionList at depth + 1, then the first node at depth + 2.
  const first =
    ast[i + 2]?.depth === n.depth + 2 && ast[i + 1]?.node === 'ExpressionList' ? ast[i + 2] : undefined;
  const literal = first?.node === 'Literal' ? stringLiteral(first.arg) : undefined;
  if (parent === 'TableExpression') {
    if (!TABLE_FUNCTIONS.has(lower))
      throw refused(
        `table function ${name.slice(0, 100)}() is not allowed here; allowed: ${[...TABLE_FUNCTIONS].join(', ')}`,
        { function: name },
      );
    if (lower === 'merge' && literal !== scope.served)
      throw refused(
        `merge() reads only the service's database here, named as a plain string ('${scope.served}')`,
        {
          function: name,
        },
      );
    if (STRUCTURE_FUNCTIONS.has(lower) && first && (first.node !== 'Literal' || literal === undefined)) {
      // values(1, 2) has no structure; generateRandom and null always start with one.
      if (lower !== 'values')
        throw refused(`${name}() takes its structure as a plain string here`, { function: name });
    }
    if (STRUCTURE_FUNCTIONS.has(lower) && literal !== undefined && COLUMN_CLAUSES.test(literal))
      throw refused(
        `${name}()'s structure may hold column names and types only (no DEFAULT, MATERIALIZED, ALIAS, CODEC, ...): its expressions are not checked`,
        { function: name },
      );
    return;
  }
  if (!catalog.allowed(name))
    throw refused(
      `function ${name.slice(0, 100)}() is not allowed here: it is not one the engine describes as a function of values (it reads files, tables or settings by name, or shows the server itself)`,
      { function: name },
    );
  if (FORMAT_FUNCTIONS.test(lower)) {
    if (literal === undefined)
      throw refused(`${name}() takes a format name as a plain string here`, { function: name });
    checkFormat(literal);
  }
}

/**
 * Checks the syntax tree (`EXPLAIN AST` lines) of the canonical statement; throws READ_ONLY
 * naming the first thing refused.
 */
export function checkAst(
  lines: string[],
  canonical: string,
  scope: QueryScope,
  catalog: FunctionCatalog,
): AstCheck {
  checkNames(canonical);
  const ast = parseAst(lines);
  if (ast.length === 0) throw refused('empty query');
  const root = ast[0];
  if (!READ_ROOTS.test(root.node))
    throw refused(
      `only SELECT, SHOW, DESCRIBE, EXISTS and EXPLAIN are allowed here (read-only); this is a ${statementName(canonical)} statement`,
      { statement: root.node },
    );
  /** Node names by depth, to know a node's parent. */
  const path: string[] = [];
  for (let i = 0; i < ast.length; i++) {
    const n = ast[i];
    path.length = n.depth;
    const parent = path[n.depth - 1];
    path[n.depth] = n.node;
    if (n.node === 'Set') throw settingsRefused();
    if (n !== root && n.node.endsWith('Query') && !READ_QUERY_NODES.test(n.node))
      throw refused(`only read statements are allowed here; the query contains a ${n.node}`, {
        statement: n.node,
      });
    if (n.node === 'Function') checkFunction(ast, i, parent, scope, catalog);
    // A qualified name is a table; an unqualified one may be a CTE's, which the resolution tells.
    if (n.node === 'TableIdentifier') {
      const name = n.arg.split(' ')[0];
      const dot = name.indexOf('.');
      if (dot > 0) checkTable(name.slice(0, dot), name.slice(dot + 1), scope.served);
    }
  }
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
  const withoutFormat = format ? canonical.slice(0, canonical.lastIndexOf(' FORMAT ')) : canonical;
  return { kind: root.node, format, resolve: resolveTarget(root.node, withoutFormat, ast, scope) };
}

/** The SELECT to resolve for a statement of kind `kind` (its canonical text without FORMAT). */
function resolveTarget(kind: string, text: string, ast: AstLine[], scope: QueryScope): string | undefined {
  if (SELECTS.test(kind)) return text;
  if (kind === 'DescribeQuery') {
    if (!text.startsWith(DESCRIBE_PREFIX))
      throw refused('DESCRIBE is accepted as DESCRIBE [TABLE] <table, table function or (subquery)>');
    return `SELECT * FROM ${text.slice(DESCRIBE_PREFIX.length)}`;
  }
  if (kind === 'Explain') {
    const m = EXPLAIN_FORM.exec(text);
    const inner = ast.filter((n) => n.depth === 1);
    if (!m || inner.length !== 1 || !SELECTS.test(inner[0].node))
      throw refused(
        'EXPLAIN is accepted as EXPLAIN [AST|SYNTAX|QUERY TREE|PLAN|PIPELINE|ESTIMATE] SELECT ..., without options',
      );
    return text.slice(m[0].length);
  }
  if (/^Show(Tables|Columns|Functions|Indexes)$/.test(kind)) {
    const form = SHOW_FORMS.map((re) => re.exec(text)).find((m) => m);
    if (!form)
      throw refused(
        "SHOW is accepted as SHOW TABLES|DATABASES|FUNCTIONS|DICTIONARIES [FROM db] [[NOT] [I]LIKE 'pattern'] [LIMIT n], or SHOW COLUMNS|INDEXES FROM table [FROM db] [LIKE 'pattern'] [LIMIT n]",
      );
    const db = form.groups?.db ? unquote(form.groups.db) : scope.current;
    if (form.groups?.table) checkTable(db, unquote(form.groups.table), scope.served);
    else checkDatabase(db, scope.served);
    return undefined;
  }
  // EXISTS and SHOW CREATE: one object by name.
  const m = OBJECT_FORM.exec(text);
  if (!m?.groups)
    throw refused('EXISTS and SHOW CREATE are accepted for one table, view or database by name');
  const { what, first, second } = m.groups;
  if (what === 'DATABASE') {
    if (second) throw refused('a database name has no dot');
    checkDatabase(unquote(first), scope.served);
  } else if (second) checkTable(unquote(first), unquote(second), scope.served);
  else checkTable(scope.current, unquote(first), scope.served);
  return undefined;
}
