/**
 * Hostile SQL, generated: every forbidden object put into every syntactic position the grammar
 * gives it (test/integration/sql-adversary.test.ts). The objects come from the engine itself:
 * every system table the interface does not list, every table function it does not list, every
 * function of the categories it does not allow and the "Other" functions that show the server,
 * other databases, and the path columns of system.tables / system.databases. Each statement
 * must be refused (4xx) with ClickHouse's error body, and no answer may hold anything they hold.
 */

/** A forbidden object: how a statement names it as a table, or as a value. */
export interface Forbidden {
  name: string;
  /** A table expression (FROM position), if it is table-like. */
  table?: string;
  /** A scalar expression, if it is a value (a function call, a column). */
  value?: string;
  /** The FROM clause a value needs (a path column's table). */
  from?: string;
  /** How many of the table positions it is tried in (all of them by default). */
  positions?: number;
}

/** Positions a quoted system table name is tried in. */
const QUOTED_POSITIONS = 6;

/** Statements with a table expression `T`. */
const TABLE_POSITIONS: ((t: string) => string)[] = [
  (t) => `SELECT * FROM ${t}`,
  (t) => `SELECT count() FROM ${t}`,
  (t) => `SELECT 1 FROM system.one JOIN ${t} ON 1 = 1`,
  (t) => `SELECT 1 FROM system.one AS a LEFT JOIN ${t} AS b ON 1 = 1`,
  (t) => `SELECT 1 FROM system.one, ${t}`,
  (t) => `SELECT 1 WHERE 1 IN (SELECT 1 FROM ${t})`,
  (t) => `SELECT (1, 1) IN (SELECT 1, 1 FROM ${t})`,
  (t) => `SELECT (SELECT count() FROM ${t})`,
  (t) => `SELECT 1 WHERE (SELECT count() FROM ${t}) >= 0`,
  (t) => `SELECT 1 LIMIT (SELECT count() FROM ${t})`,
  (t) => `SELECT 1 LIMIT 1 OFFSET (SELECT count() FROM ${t})`,
  (t) => `SELECT 1 ORDER BY (SELECT count() FROM ${t})`,
  (t) => `SELECT 1 GROUP BY 1 HAVING (SELECT count() FROM ${t}) >= 0`,
  (t) => `SELECT count() OVER (PARTITION BY (SELECT count() FROM ${t}))`,
  (t) => `SELECT * FROM numbers((SELECT count() FROM ${t}))`,
  (t) => `SELECT * FROM generateRandom((SELECT toString(count()) FROM ${t})) LIMIT 1`,
  (t) => `SELECT * FROM generateRandom('a UInt64 DEFAULT (SELECT count() FROM ${t})') LIMIT 1`,
  (t) => `SELECT * FROM null('a UInt64 DEFAULT (SELECT count() FROM ${t})')`,
  (t) => `WITH x AS (SELECT * FROM ${t}) SELECT count() FROM x`,
  (t) => `WITH (SELECT count() FROM ${t}) AS n SELECT n`,
  (t) => `SELECT * FROM (SELECT * FROM (SELECT * FROM ${t}))`,
  (t) => `SELECT * FROM view(SELECT * FROM ${t})`,
  (t) => `SELECT 1 UNION ALL SELECT count() FROM ${t}`,
  (t) => `SELECT 1 INTERSECT SELECT count() FROM ${t}`,
  (t) => `SELECT 1 EXCEPT SELECT count() FROM ${t}`,
  (t) => `SELECT x FROM system.one ARRAY JOIN (SELECT groupArray(1) FROM ${t}) AS x`,
  (t) => `SELECT arrayMap(x -> (SELECT count() FROM ${t}), [1])`,
  (t) => `SELECT EXISTS (SELECT 1 FROM ${t})`,
  (t) => `DESCRIBE (SELECT * FROM ${t})`,
  (t) => `DESCRIBE TABLE ${t}`,
  (t) => `DESCRIBE (SELECT 1 LIMIT (SELECT count() FROM ${t}))`,
  (t) => `EXPLAIN SELECT * FROM ${t}`,
  (t) => `EXPLAIN SYNTAX SELECT * FROM ${t}`,
  (t) => `EXPLAIN QUERY TREE SELECT * FROM ${t}`,
  (t) => `EXPLAIN ESTIMATE SELECT * FROM ${t}`,
  (t) => `SHOW COLUMNS FROM ${t}`,
  (t) => `SHOW TABLES LIKE (SELECT toString(count()) FROM ${t})`,
  (t) => `SHOW TABLES LIMIT (SELECT count() FROM ${t})`,
  (t) => `EXISTS TABLE ${t}`,
  (t) => `SHOW CREATE TABLE ${t}`,
  (t) => `SELECT formatRow('TSV', *) FROM ${t}`,
];

/** Statements with a value `V` (and the FROM it needs, if any). */
const VALUE_POSITIONS: ((v: string, from: string) => string)[] = [
  (v, f) => `SELECT ${v}${f}`,
  (v, f) => `SELECT 1${f} WHERE ${v} IS NOT NULL`,
  (v, f) => `SELECT 1${f} WHERE isNull(${v}) OR 1`,
  (v, f) => `SELECT 1${f} ORDER BY ${v}`,
  (v, f) => `SELECT 1${f} GROUP BY ${v}`,
  (v, f) => `SELECT count()${f} GROUP BY 1 HAVING length(toString(${v})) >= 0`,
  (v, f) => `SELECT 1 LIMIT (SELECT length(toString(${v}))${f})`,
  (v, f) => `SELECT 1 LIMIT 1 OFFSET (SELECT length(toString(${v}))${f})`,
  (v, f) => `SELECT (SELECT toString(${v})${f})`,
  (v, f) => `SELECT * FROM numbers((SELECT length(toString(${v}))${f}))`,
  (v, f) => `SELECT * FROM generateRandom((SELECT toString(${v})${f})) LIMIT 1`,
  (v, _f) => `SELECT * FROM generateRandom('a String DEFAULT toString(${v.replaceAll("'", "''")})') LIMIT 1`,
  (v, f) => `WITH (SELECT toString(${v})${f}) AS y SELECT y`,
  (v, f) => `WITH x AS (SELECT ${v} AS c${f}) SELECT * FROM x`,
  (v, f) => `SELECT arrayMap(x -> toString(${v}), [1])${f}`,
  (v, f) => `SELECT arrayFilter(x -> length(toString(${v})) > 0, [1])${f}`,
  (v, f) => `SELECT x FROM (SELECT [toString(${v})] AS a${f}) ARRAY JOIN a AS x`,
  (v, f) => `SELECT count() OVER (PARTITION BY ${v})${f}`,
  (v, f) => `SELECT * FROM view(SELECT ${v}${f})`,
  (v, f) => `SELECT 1 UNION ALL SELECT length(toString(${v}))${f}`,
  (v, f) => `DESCRIBE (SELECT ${v}${f})`,
  (v, f) => `DESCRIBE (SELECT 1 LIMIT (SELECT length(toString(${v}))${f}))`,
  (v, f) => `EXPLAIN SELECT ${v}${f}`,
  (v, f) => `EXPLAIN SYNTAX SELECT ${v}${f}`,
  (v, f) => `SELECT throwIf(length(toString(${v})) >= 0, 'x')${f}`,
  (v, f) => `SELECT formatRow('TSV', ${v})${f}`,
  (v, f) => `SELECT (SELECT 1${f} WHERE toString(${v}) IN (SELECT 'x') LIMIT 1)`,
];

/** Arguments that make each known reaching table function well formed (others get none). */
const TABLE_FUNCTION_ARGS: Record<string, string> = {
  file: "'{victim}', 'LineAsString'",
  fileCluster: "'c', '{victim}', 'LineAsString'",
  url: "'{url}', 'LineAsString'",
  urlCluster: "'c', '{url}', 'LineAsString'",
  s3: "'{url}', 'LineAsString'",
  remote: "'127.0.0.1:9000', system.one",
  remoteSecure: "'127.0.0.1:9440', system.one",
  cluster: "'c', system.one",
  clusterAllReplicas: "'c', system.one",
  mysql: "'127.0.0.1:3306', 'd', 't', 'u', 'p'",
  postgresql: "'127.0.0.1:5432', 'd', 't', 'u', 'p'",
  executable: "'cat', 'LineAsString', 'l String'",
  format: "CSV, '1,2'",
  input: "'a String'",
  dictionary: "'d'",
  loop: 'system.one',
  viewExplain: "'EXPLAIN', '', (SELECT 1)",
  mergeTreeIndex: 'vaultstream, t',
  mergeTreeProjection: 'vaultstream, t, p',
  fuzzJSON: "'{}'",
  fuzzQuery: "'SELECT 1'",
  primes: '10',
  filesystem: "'/'",
};

/** "Other" functions that show the server or read by name, with arguments that make them well formed. */
const SERVER_FUNCTIONS = [
  "getServerSetting('path')",
  "getServerSetting('user_files_path')",
  "getMergeTreeSetting('index_granularity')",
  "file('{victim}')",
  'filesystemAvailable()',
  'filesystemCapacity()',
  'filesystemUnreserved()',
  'hostName()',
  'FQDN()',
  'tcpPort()',
  "getServerPort('tcp_port')",
  'uptime()',
  'serverUUID()',
  'buildId()',
  'getOSKernelVersion()',
  "getMacro('shard')",
  'showCertificate()',
  "hasColumnInTable('system', 'one', 'dummy')",
  "joinGet('x', 'y', 1)",
  "catboostEvaluate('{victim}', 1)",
  "getMaxTableNameLengthForDatabase('system')",
  "generateSerialID('s')",
  "globalVariable('x')",
  'runningConcurrency(now(), now())',
  'sleep(0.1)',
  'sleepEachRow(0.1)',
  'currentRoles()',
  'enabledProfiles()',
  "getClientHTTPHeader('x')",
  'transactionID()',
  "fuzzQuery('SELECT 1')",
  'addressToSymbol(toUInt64(1))',
  'addressToLine(toUInt64(1))',
  "demangle('x')",
  'getTypeSerializationStreams(1)',
  "dictGet('d', 'a', 1)",
  'regionToName(toUInt32(1))',
  "naiveBayesClassifier('m', 'x')",
  "aiGenerate('x')",
];

export interface AdversaryInput {
  /** System tables of a full engine (the service's store). */
  systemTables: string[];
  /** Table functions of the engine. */
  tableFunctions: string[];
  /** Functions of the categories the interface does not allow (Introspection, Internal, Dictionary, ...). */
  categoryFunctions: string[];
  /** What the interface allows (store/read-only-rules.ts). */
  allowedSystem: Set<string>;
  allowedTableFunctions: Set<string>;
  victim: string;
  url: string;
}

/** Every forbidden object, each named as the grammar lets a statement name it. */
export function forbiddenObjects(i: AdversaryInput): Forbidden[] {
  const fill = (s: string) => s.replaceAll('{victim}', i.victim).replaceAll('{url}', i.url);
  const out: Forbidden[] = [];
  for (const t of i.systemTables)
    if (!i.allowedSystem.has(t)) {
      out.push({ name: `system.${t}`, table: `system.${t}` });
      // Quoted, in the first few positions (the parser writes both alike).
      out.push({ name: `system.${t} (quoted)`, table: `\`system\`.\`${t}\``, positions: QUOTED_POSITIONS });
    }
  for (const f of i.tableFunctions)
    if (!i.allowedTableFunctions.has(f.toLowerCase()))
      out.push({ name: `${f}()`, table: `${f}(${fill(TABLE_FUNCTION_ARGS[f] ?? '')})` });
  for (const v of SERVER_FUNCTIONS) {
    out.push({ name: v, value: fill(v) });
    out.push({ name: `${v} (upper)`, value: fill(v).replace(/^(\w+)/, (m) => m.toUpperCase()) });
  }
  for (const f of i.categoryFunctions) out.push({ name: `${f}()`, value: `${f}(1)` });
  // Other databases: the analysts' engine's incoming copies, and one that is not there.
  for (const db of ['_incoming', 'nope', 'vaultstream_next']) out.push({ name: `${db}.t`, table: `${db}.t` });
  for (const [col, table] of [
    ['data_paths', 'system.tables'],
    ['metadata_path', 'system.tables'],
    ['data_path', 'system.databases'],
    ['metadata_path', 'system.databases'],
  ])
    out.push({ name: `${table}.${col}`, value: col, from: ` FROM ${table}` });
  out.push({ name: 'system.tables.*', value: 'tuple(*)', from: ' FROM system.tables' });
  out.push({
    name: "system.tables COLUMNS('path')",
    value: "tuple(COLUMNS('path'))",
    from: ' FROM system.tables',
  });
  return out;
}

/** Every statement: each object in each position it fits. */
export function adversarialStatements(objects: Forbidden[]): { object: string; sql: string }[] {
  const out: { object: string; sql: string }[] = [];
  for (const o of objects) {
    if (o.table)
      for (const p of TABLE_POSITIONS.slice(0, o.positions)) out.push({ object: o.name, sql: p(o.table) });
    if (o.value) for (const p of VALUE_POSITIONS) out.push({ object: o.name, sql: p(o.value, o.from ?? '') });
  }
  return out;
}
