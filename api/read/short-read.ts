/**
 * The SETTINGS clause of the API's short reads of the metrics tables: one thread. Each reads a few
 * granules with FINAL; over a table of several parts (every settle writes one until the merges
 * catch up), the engine's default threads split FINAL's merge into parallel streams whose setup
 * costs more than the read (bench/views.ts times the endpoints that use it).
 * A ClickHouse server takes the same clause; at the end of a UNION ALL it holds for every branch.
 */
export const SHORT_READ = 'SETTINGS max_threads = 1';
