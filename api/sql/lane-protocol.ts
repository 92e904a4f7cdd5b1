/**
 * The messages between the analysts' HTTP server (api/sql/lanes.ts, the process's main thread)
 * and a lane (api/sql/lane-worker.ts, a thread with one analysts' connection of its own). A lane
 * runs one query at a time: the checks, the caps read back, then the result as a stream of the
 * engine's chunks, each sent only once the server asked for it (`more`), so a client that reads
 * slowly holds the engine back instead of filling memory.
 */
import type { QueryLimits } from '../../store/read-only.ts';
import type { SqlFailure } from './engine-errors.ts';

/** What a lane is started with (`workerData`). */
export interface LaneData {
  /** The module the entry imports (api/thread/entry.mjs): the bundle's or the TypeScript source. */
  module: string;
  /** The analysts' engine's data directory. */
  path: string;
  served: string;
  limits: QueryLimits;
  /** Paths no message may show (store/read-only-engine.ts's and the service's directories). */
  roots: string[];
}

export interface LaneRequest {
  id: number;
  query: string;
  /** Database of unqualified names (checked by the server against the ones served). */
  database: string;
  /** `{name:Type}` values, in ClickHouse's escaped text form. */
  params: Record<string, string>;
  /** The format when the statement names none. */
  defaultFormat: string;
  /** The SETTINGS clause's entries: the client's lowered caps and output options (api/sql/settings.ts). */
  settings: string[];
  /** Native as this client protocol revision reads it (0: as the engine writes it). */
  nativeRevision: number;
  /** The answer in ClickHouse's compressed blocks (`compress=1`). */
  compressBlocks: boolean;
}

export type ToLane =
  | { type: 'run'; request: LaneRequest }
  | { type: 'more'; id: number }
  | { type: 'cancel'; id: number };

export type FromLane =
  | { type: 'ready' }
  | { type: 'failed-start'; message: string }
  /** Checked; the caps in force are `caps`; chunks follow. */
  | { type: 'start'; id: number; format: string; caps: QueryLimits }
  /** One chunk of the answer (its bytes as sent, `raw` the engine's bytes before any framing). */
  | { type: 'chunk'; id: number; bytes: ArrayBuffer; raw: number; rows: number }
  | { type: 'end'; id: number }
  /** Refused or failed, before `start` or after it. */
  | { type: 'error'; id: number; error: SqlFailure }
  /** The lane is free again. */
  | { type: 'idle'; id: number };
