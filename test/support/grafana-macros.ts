/**
 * Expands a Grafana ClickHouse panel query as the official data source
 * (grafana-clickhouse-datasource, pkg/macros/macros.go) and Grafana's template engine do,
 * for a fixed time range: `$__timeFilter(col)` -> `col >= toDateTime(from) AND col <= toDateTime(to)`,
 * `$__timeFilter_ms`, `$__dateFilter(col)` (toDate('YYYY-MM-DD')), `$__fromTime`, `$__toTime`,
 * `$__fromTime_ms`, `$__toTime_ms`, `$__interval_s`, and `$var` / `${var}` / `[[var]]` variables.
 * A macro or variable it does not know is an error, never left in the SQL.
 */
export interface Range {
  /** Unix seconds. */
  from: number;
  to: number;
}

const date = (s: number) => `toDate('${new Date(s * 1000).toISOString().slice(0, 10)}')`;

export function expandGrafanaSql(
  sql: string,
  range: Range,
  vars: Record<string, string>,
  intervalS = 86_400,
): string {
  const { from, to } = range;
  const filters: Record<string, (col: string) => string> = {
    timeFilter: (c) => `${c} >= toDateTime(${from}) AND ${c} <= toDateTime(${to})`,
    timeFilter_ms: (c) =>
      `${c} >= fromUnixTimestamp64Milli(${from * 1000}) AND ${c} <= fromUnixTimestamp64Milli(${to * 1000})`,
    dateFilter: (c) => `${c} >= ${date(from)} AND ${c} <= ${date(to)}`,
  };
  const plain: Record<string, string> = {
    fromTime_ms: `fromUnixTimestamp64Milli(${from * 1000})`,
    toTime_ms: `fromUnixTimestamp64Milli(${to * 1000})`,
    fromTime: `toDateTime(${from})`,
    toTime: `toDateTime(${to})`,
    interval_s: String(intervalS),
  };
  let out = sql.replace(/\$__(\w+)\(([^()]*)\)/g, (m, name: string, arg: string) => {
    const f = filters[name];
    if (!f) throw new Error(`unknown macro ${m}`);
    return f(arg.trim());
  });
  out = out.replace(/\$__(\w+)/g, (m, name: string) => {
    if (!(name in plain)) throw new Error(`unknown macro ${m}`);
    return plain[name];
  });
  out = out.replace(/\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)/g, (m, a, b, c) => {
    const name = a ?? b ?? c;
    if (!(name in vars)) throw new Error(`unknown variable ${m}`);
    return vars[name];
  });
  return out;
}
