/**
 * What a read-only query may name (store/read-only.ts checks the syntax tree against these):
 * deny by default. Table functions, output formats and system tables pass only from short lists
 * of things that read nothing outside the engine's own data and write nothing anywhere; some
 * functions are refused wherever they appear, because they reach files, URLs, other servers or
 * programs, or show the server's paths, configuration and stack traces.
 */

/** Table functions that read nothing outside the engine's own data (`merge` only over the service's database). */
export const TABLE_FUNCTIONS = new Set(
  [
    'numbers',
    'numbers_mt',
    'zeros',
    'zeros_mt',
    'generateSeries',
    'generate_series',
    'generateRandom',
    'values',
    'view',
    'merge',
    'null',
  ].map((n) => n.toLowerCase()),
);

/**
 * Functions refused wherever they appear (lower-cased): those that reach files, URLs, other
 * servers or programs (`file` is also a scalar that reads a file as a string), and those that
 * show the server itself (its settings and paths, filesystem sizes, code addresses, certificates,
 * macros) or keep state outside the query (`generateSerialID`).
 */
export const REFUSED_FUNCTIONS =
  /^(file|filecluster|url|urlcluster|s3|s3cluster|gcs|oss|cosn|hdfs|hdfscluster|remote|remotesecure|cluster|clusterallreplicas|mysql|postgresql|mongodb|redis|sqlite|jdbc|odbc|executable|executablepool|input|azureblobstorage\w*|iceberg\w*|deltalake\w*|hudi\w*|paimon\w*|ytsaurus|arrowflight|dictionary|catboostevaluate|modelevaluate|getserversetting|filesystem\w*|addresstoline\w*|addresstosymbol|demangle|showcertificate|getmacro|generateserialid|mergetreeindex|mergetreepartinfo)$/;

/**
 * Output formats a result may take (lower-cased). Left out: those that read a schema or a
 * template from a file or send it to a registry (Protobuf, ProtobufSingle, ProtobufList,
 * CapnProto, Template, TemplateIgnoreSpaces, AvroConfluent), and the wire formats of other
 * servers and images (MySQLWire, PostgreSQLWire, ODBCDriver2, PNG, Buffers).
 */
export const OUTPUT_FORMATS = new Set(
  [
    'Arrow',
    'ArrowStream',
    'Avro',
    'BSONEachRow',
    'CSV',
    'CSVWithNames',
    'CSVWithNamesAndTypes',
    'CustomSeparated',
    'CustomSeparatedWithNames',
    'CustomSeparatedWithNamesAndTypes',
    'GeoJSON',
    'Hash',
    'JSON',
    'JSONColumns',
    'JSONColumnsWithMetadata',
    'JSONCompact',
    'JSONCompactColumns',
    'JSONCompactEachRow',
    'JSONCompactEachRowWithNames',
    'JSONCompactEachRowWithNamesAndTypes',
    'JSONCompactEachRowWithProgress',
    'JSONCompactStrings',
    'JSONCompactStringsEachRow',
    'JSONCompactStringsEachRowWithNames',
    'JSONCompactStringsEachRowWithNamesAndTypes',
    'JSONCompactStringsEachRowWithProgress',
    'JSONEachRow',
    'JSONEachRowWithProgress',
    'JSONL',
    'JSONLines',
    'JSONObjectEachRow',
    'JSONStrings',
    'JSONStringsEachRow',
    'JSONStringsEachRowWithProgress',
    'LineAsString',
    'LineAsStringWithNames',
    'LineAsStringWithNamesAndTypes',
    'MD',
    'Markdown',
    'MsgPack',
    'NDJSON',
    'Native',
    'Npy',
    'Null',
    'ORC',
    'Parquet',
    'Pretty',
    'PrettyCompact',
    'PrettyCompactMonoBlock',
    'PrettyCompactNoEscapes',
    'PrettyCompactNoEscapesMonoBlock',
    'PrettyJSONEachRow',
    'PrettyJSONLines',
    'PrettyMonoBlock',
    'PrettyNDJSON',
    'PrettyNoEscapes',
    'PrettyNoEscapesMonoBlock',
    'PrettySpace',
    'PrettySpaceMonoBlock',
    'PrettySpaceNoEscapes',
    'PrettySpaceNoEscapesMonoBlock',
    'Prometheus',
    'Raw',
    'RawBLOB',
    'RawWithNames',
    'RawWithNamesAndTypes',
    'RowBinary',
    'RowBinaryWithNames',
    'RowBinaryWithNamesAndTypes',
    'SQLInsert',
    'TSKV',
    'TSV',
    'TSVRaw',
    'TSVRawWithNames',
    'TSVRawWithNamesAndTypes',
    'TSVWithNames',
    'TSVWithNamesAndTypes',
    'TabSeparated',
    'TabSeparatedRaw',
    'TabSeparatedRawWithNames',
    'TabSeparatedRawWithNamesAndTypes',
    'TabSeparatedWithNames',
    'TabSeparatedWithNamesAndTypes',
    'Values',
    'Vertical',
    'XML',
  ].map((f) => f.toLowerCase()),
);

export function isOutputFormat(name: string): boolean {
  return OUTPUT_FORMATS.has(name.toLowerCase());
}

/** Functions whose first argument is an output format name (checked like a FORMAT clause). */
export const FORMAT_FUNCTIONS = /^(formatrow|formatrownonewline)$/;

/**
 * System tables a query may read: what drivers and BI tools browse a schema with, and tables of
 * constants. Not the logs (other users' queries), processes, parts (paths), disks, errors (other
 * queries' messages), stack traces or server settings.
 */
export const SYSTEM_TABLES = new Set([
  'one',
  'numbers',
  'numbers_mt',
  'zeros',
  'zeros_mt',
  'databases',
  'tables',
  'columns',
  'functions',
  'table_functions',
  'formats',
  'data_type_families',
  'table_engines',
  'aggregate_function_combinators',
  'time_zones',
  'collations',
  'keywords',
  'settings',
]);

/** Columns of system.databases/system.tables that hold the server's paths (refused by name). */
export const PATH_COLUMNS = /^(\w+\.)*(data_path|data_paths|metadata_path)$/;
/** System tables that have path columns: a query reading them may not use `*` or `COLUMNS(...)`. */
export const PATH_TABLES = new Set(['databases', 'tables']);

/** Databases a query's tables may be in besides the service's own (empty, or schema views). */
export const OTHER_DATABASES = new Set(['default', 'information_schema']);
