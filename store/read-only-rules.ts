/**
 * What a read-only query may name (store/read-only-ast.ts checks the syntax tree, and
 * store/read-only-tree.ts what the engine resolved, against these): deny by default. Table
 * functions, output formats, system tables and functions pass only from lists of things that
 * read nothing outside the engine's own data and write nothing anywhere. The analysts' engine
 * (store/read-only-engine.ts) holds no other system table at all.
 */

/**
 * Table functions that read nothing outside the engine's own data (`merge` only over the service's
 * database). Not `view()`: the engine resolves its query only when it runs, so no check sees it (a
 * subquery says the same).
 */
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
    'merge',
    'null',
  ].map((n) => n.toLowerCase()),
);

/**
 * Categories of `system.functions` whose functions compute on values only: they read no table,
 * file, URL or setting and show nothing of the server (store/read-only-functions.ts). Left out:
 * Other (checked by name, OTHER_FUNCTIONS), Internal (the analyzer's own), Introspection (code
 * addresses), Dictionary and Embedded Dictionary (dictionaries name files and servers), Machine
 * Learning (models read from files) and AI (requests to a model's service).
 */
export const SAFE_FUNCTION_CATEGORIES = new Set([
  'Aggregate Functions',
  'Arithmetic',
  'Arrays',
  'Bit',
  'Bitmap',
  'Comparison',
  'Conditional',
  'Dates and Times',
  'Distance',
  'Encoding',
  'Encryption',
  'Financial',
  'Geo',
  'Geo Polygon',
  'Hash',
  'IP Address',
  'JSON',
  'Logical',
  'Map',
  'Mathematical',
  'Null',
  'NumericIndexedVector',
  'QBit',
  'Random Number',
  'Rounding',
  'String',
  'String Replacement',
  'String Search',
  'String Splitting',
  'Time Series',
  'Time Window',
  'Tuple',
  'Type Conversion',
  'URL',
  'UUID',
]);

/**
 * Functions of the engine's "Other" category that compute on values or describe the query
 * itself. Not here, and so refused: those that show the server (getServerSetting,
 * getMergeTreeSetting, hostName, FQDN, tcpPort, getServerPort, uptime, serverUUID, buildId,
 * getOSKernelVersion, getMacro, showCertificate, filesystem*), read a file
 * or a table by name (file, hasColumnInTable, joinGet, catboostEvaluate,
 * getMaxTableNameLengthForDatabase), keep state across queries (generateSerialID, globalVariable,
 * runningConcurrency), wait (sleep, sleepEachRow), or list roles and profiles.
 */
export const OTHER_FUNCTIONS = new Set([
  // The analyzer's CAST, which the service's inlined parameters are written with (store/inline-params.ts).
  '_CAST',
  'bar',
  'blockNumber',
  'blockSize',
  'byteSize',
  'colorOKLABToSRGB',
  'colorOKLCHToSRGB',
  'colorSRGBToOKLAB',
  'colorSRGBToOKLCH',
  'countDigits',
  'currentDatabase',
  'currentSchemas',
  'currentUser',
  'defaultValueOfArgumentType',
  'defaultValueOfTypeName',
  'digits',
  // The engine's display name (`vaultstream`, store/read-only-engine.ts) and revision: drivers' hello.
  'displayName',
  'dumpColumnStructure',
  'errorCodeToName',
  'finalizeAggregation',
  'flipCoordinates',
  'formatQuery',
  'formatQueryOrNull',
  'formatQuerySingleLine',
  'formatQuerySingleLineOrNull',
  'formatReadableDecimalSize',
  'formatReadableQuantity',
  'formatReadableSize',
  'formatReadableTimeDelta',
  'getSetting',
  'getSettingOrDefault',
  'getSizeOfEnumType',
  'getSubcolumn',
  'identity',
  'ignore',
  'indexHint',
  'initializeAggregation',
  'isConstant',
  'isDecimalOverflow',
  'lowCardinalityIndices',
  'lowCardinalityKeys',
  'MACNumToString',
  'MACStringToNum',
  'MACStringToOUI',
  'materialize',
  'minSampleSizeContinuous',
  'minSampleSizeConversion',
  'neighbor',
  'normalizedQueryHash',
  'normalizedQueryHashKeepNames',
  'normalizeQuery',
  'normalizeQueryKeepNames',
  'parseReadableSize',
  'parseReadableSizeOrNull',
  'parseReadableSizeOrZero',
  'parseTimeDelta',
  'revision',
  'rowNumberInAllBlocks',
  'rowNumberInBlock',
  'runningAccumulate',
  'runningDifference',
  'runningDifferenceStartingWithFirstValue',
  'throwIf',
  'toColumnTypeName',
  'tokenizeQuery',
  'toTypeName',
  'transform',
  'variantElement',
  'variantType',
  'version',
  'visibleWidth',
]);

/**
 * Names the parser writes as functions that are syntax, not functions of `system.functions`
 * (lower-cased): lambdas, `EXISTS (subquery)`, `GROUPING`, `untuple`.
 */
export const SYNTAX_FUNCTIONS = new Set(['lambda', 'exists', 'grouping', 'untuple']);

/**
 * Table functions whose first argument is a table structure (`'a UInt8, b String'`): a structure
 * may hold column clauses with expressions of their own (DEFAULT, MATERIALIZED, ALIAS, ...),
 * which no syntax tree of the query shows, so only names and types are taken there.
 */
export const STRUCTURE_FUNCTIONS = new Set(['generaterandom', 'null', 'values']);

/** Words of a column declaration beyond its name and type (store/read-only-ast.ts refuses them in a structure). */
export const COLUMN_CLAUSES =
  /\b(DEFAULT|MATERIALIZED|ALIAS|EPHEMERAL|CODEC|TTL|COMMENT|SETTINGS|STATISTICS|PRIMARY|CHECK|CONSTRAINT|INDEX|PROJECTION)\b/i;

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

/** Columns of PATH_TABLES that hold the engine's paths (store/read-only-tree.ts refuses them as resolved). */
export const PATH_COLUMNS = new Set(['data_path', 'data_paths', 'metadata_path']);
/** System tables with path columns. */
export const PATH_TABLES = new Set(['system.databases', 'system.tables']);

/**
 * Databases a query's tables may be in besides the service's own and `system` (whose tables
 * must be in SYSTEM_TABLES): the schema views, and `default` (empty in the analysts' engine: a
 * client that connects to it finds nothing, and no error).
 */
export const OTHER_DATABASES = new Set(['default', 'information_schema', 'INFORMATION_SCHEMA']);
