/**
 * TabSeparated encoding of rows for inserts: ClickHouse parses it faster than any JSON
 * format. Values: numbers and bigints as digits, strings escaped (backslash, tab,
 * newline, carriage return, NUL), null as \N, arrays and maps as ClickHouse literals
 * whose quoted strings use the same backslash escapes (plus \'), as the TSV format reads
 * nested values in place.
 */
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };
const NEEDS_ESCAPE = /[\\\t\n\r\0]/;
const ESCAPE_ALL = /[\\\t\n\r\0]/g;

function escapeTsv(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(ESCAPE_ALL, (c) => ESCAPES[c]) : s;
}

/** A value as a quoted ClickHouse literal (inside arrays and maps). */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (Array.isArray(v)) return `[${v.map(literal).join(',')}]`;
  if (typeof v === 'object')
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${literal(k)}:${literal(x)}`)
      .join(',')}}`;
  return `'${escapeTsv(String(v)).replaceAll("'", "\\'")}'`;
}

function field(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  switch (typeof v) {
    case 'string':
      return escapeTsv(v);
    case 'number':
    case 'bigint':
      return String(v);
    case 'boolean':
      return v ? '1' : '0';
    default:
      return literal(v);
  }
}

/** Encodes `rows` (objects with the given columns) as TabSeparated text. */
export function toTsv(rows: Record<string, unknown>[], columns: readonly string[]): string {
  const out: string[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    let line = field(r[columns[0]]);
    for (let c = 1; c < columns.length; c++) line += `\t${field(r[columns[c]])}`;
    out[i] = line;
  }
  return `${out.join('\n')}\n`;
}
