/**
 * The second check of a read-only query, on what the engine resolved it to: `EXPLAIN QUERY TREE`
 * (the analyzer) of the SELECT the first check named (store/read-only-ast.ts). The analyzer turns
 * every way of naming a table into one TABLE node with its database (`IN system.disks`, a scalar
 * subquery in LIMIT, a CTE, `DESCRIBE (...)`, a view's alias), every function into its own name
 * (`DATABASE()` is `currentDatabase`), and every column into a COLUMN node pointing at the table
 * it comes from. Every TABLE must be the service's database's, a schema view's or a listed system
 * table; every TABLE_FUNCTION a listed one (`merge` over the service's database only); every
 * FUNCTION one the catalog allows or the analyzer's own; and the path columns of
 * system.tables/system.databases are read only by `empty()`/`notEmpty()`.
 *
 * The tree is text. Its lines are trusted because the first check refused names with control
 * characters or `: ` (a name or alias is printed as it is, so a line break in one would forge a
 * line, and `, table_name: ` a field): each node line is then `TYPE id: N[, alias: A], <engine's
 * fields>`, and the first `, <field>: ` after the id is the engine's.
 */

import { checkTable, refused } from './read-only-ast.ts';
import type { FunctionCatalog } from './read-only-functions.ts';
import { PATH_COLUMNS, PATH_TABLES, TABLE_FUNCTIONS } from './read-only-rules.ts';

interface TreeNode {
  depth: number;
  type: string;
  id?: number;
  text: string;
}

/** Node lines (`TYPE id: N, ...`) and section lines (`ARGUMENTS`, `JOIN TREE`, ...) with their depth. */
function parseTree(lines: string[]): TreeNode[] {
  const out: TreeNode[] = [];
  for (const line of lines) {
    const text = line.trimStart();
    if (text === '') continue;
    const depth = line.length - text.length;
    const m = /^([A-Z_]+) id: (\d+)/.exec(text);
    out.push(m ? { depth, type: m[1], id: Number(m[2]), text } : { depth, type: text, text });
  }
  return out;
}

/** The engine's `field` of a node line: the first `, field: ` after its id (and alias). */
function field(n: TreeNode, name: string): string | undefined {
  const at = n.text.indexOf(`, ${name}: `);
  if (at < 0) return undefined;
  const rest = n.text.slice(at + name.length + 4);
  const end = rest.indexOf(', ');
  return end < 0 ? rest : rest.slice(0, end);
}

/** The last `, source_id: N` of a COLUMN line (it is the line's last field; a type before it may print anything). */
function sourceId(n: TreeNode): number | undefined {
  const m = /, source_id: (\d+)$/.exec(n.text);
  return m ? Number(m[1]) : undefined;
}

/**
 * Checks the resolved tree (`EXPLAIN QUERY TREE` lines) of a statement's SELECT; throws READ_ONLY
 * naming the first thing refused.
 */
export function checkTree(lines: string[], served: string, catalog: FunctionCatalog): void {
  const nodes = parseTree(lines);
  const byId = new Map<number, TreeNode>();
  for (const n of nodes) if (n.id !== undefined && n.type !== 'COLUMN' && !byId.has(n.id)) byId.set(n.id, n);
  /** The line and the lines above it. */
  const stack: TreeNode[] = [];
  for (const n of nodes) {
    while (stack.length && (stack.at(-1)?.depth ?? 0) >= n.depth) stack.pop();
    stack.push(n);
    // A name the engine left unresolved (a view() argument's query is resolved only when it runs)
    // is one this check cannot see: nothing unseen runs.
    if (n.type === 'IDENTIFIER')
      throw refused(
        'the engine leaves part of this query unresolved until it runs (view() and the like): not allowed here',
      );
    if (n.type === 'TABLE') {
      const name = field(n, 'table_name');
      const dot = name?.indexOf('.') ?? -1;
      if (!name || dot < 0)
        throw refused('the engine resolved a table this check cannot read: not allowed here');
      checkTable(name.slice(0, dot), name.slice(dot + 1), served);
    } else if (n.type === 'TABLE_FUNCTION') {
      const name = field(n, 'table_function_name') ?? '';
      if (!TABLE_FUNCTIONS.has(name.toLowerCase()))
        throw refused(`table function ${name.slice(0, 100)}() is not allowed here`, { function: name });
      if (name.toLowerCase() === 'merge') checkMerge(nodes, nodes.indexOf(n), served);
    } else if (n.type === 'FUNCTION') {
      const name = field(n, 'function_name') ?? '';
      if (!catalog.allowed(name) && !catalog.internal(name))
        throw refused(`function ${name.slice(0, 100)}() is not allowed here`, { function: name });
    } else if (n.type === 'COLUMN') {
      const column = field(n, 'column_name') ?? '';
      const id = sourceId(n);
      const source = id === undefined ? undefined : byId.get(id);
      const table = source?.type === 'TABLE' ? field(source, 'table_name') : undefined;
      if (table && PATH_TABLES.has(table) && PATH_COLUMNS.has(column) && !onlyEmptiness(stack))
        throw refused(
          `column ${column} of ${table} holds the engine's paths: not readable here (empty(${column}) and notEmpty(${column}) are)`,
        );
    }
  }
}

/** Whether the column atop `stack` is the only argument of empty() / notEmpty() (FUNCTION > ARGUMENTS > LIST > COLUMN). */
function onlyEmptiness(stack: TreeNode[]): boolean {
  const [fn, args, list] = stack.slice(-4, -1);
  return (
    list?.type === 'LIST' &&
    / nodes: 1$/.test(list.text) &&
    args?.type === 'ARGUMENTS' &&
    fn?.type === 'FUNCTION' &&
    /^(empty|notEmpty)$/.test(field(fn, 'function_name') ?? '')
  );
}

/** merge()'s first argument, as resolved, must be the service's database by name. */
function checkMerge(nodes: TreeNode[], at: number, served: string): void {
  const depth = nodes[at].depth;
  const first = nodes
    .slice(at + 1)
    .find((n) => n.depth <= depth || n.type === 'CONSTANT' || n.type === 'FUNCTION');
  const literal =
    first?.type === 'CONSTANT'
      ? /^CONSTANT id: \d+, constant_value: '(\w+)', constant_value_type: String$/.exec(first.text)
      : null;
  if (literal?.[1] !== served)
    throw refused(`merge() reads only the service's database here, named as a plain string ('${served}')`);
}
