/**
 * What an analyst is told when a query is refused or fails: ClickHouse's code, its name and one
 * sentence of the engine's message, as the client wrote its query (without the statements the
 * checks wrapped it in or the SETTINGS the server appended) and without any path of this machine
 * (api/paths-hidden.ts). The message
 * is the engine's about this query only: the analysts' engine keeps no other query's text or
 * error where a query could read it (store/read-only-engine.ts), and a failed query's output is
 * cleared before the next (store/chdb-output.ts).
 */
import { VaultstreamError } from '../../core/errors.ts';
import { clickhouseCodeOf } from '../../store/read-only.ts';
import { literal } from '../../store/tsv.ts';
import { withoutPaths } from '../paths-hidden.ts';

/** An error as the analysts' process sends it across (a plain object). */
export interface SqlFailure {
  code: number;
  message: string;
  /** The engine's name for the code, when the engine gave one. */
  name?: string;
}

/** The engine's message without chDB's prefix and ClickHouse's own code/name/version decorations. */
function engineMessage(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  return raw
    .replace(/^(Query failed: |Stream aborted: )/, '')
    .replace(/^(Code: \d+\. DB::Exception: )+/, '')
    .split('\n')[0]
    .replace(/(\.)? \([A-Z][A-Z0-9_]+\)( \(version [^)]*\))?\.?/g, '$1')
    .replace(/\.$/, '');
}

/** The engine's own name for its error code (`... (UNKNOWN_TABLE) (version ...)`), when it gives one. */
function engineName(err: unknown): string | undefined {
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, d = 0; e && d < 6; d++) {
    const m = /\(([A-Z][A-Z0-9_]+)\)( \(version [^)]*\))?\.?\s*$/.exec(String(e.message ?? ''));
    if (m) return m[1];
    e = e.cause as typeof e;
  }
  return undefined;
}

/**
 * The failure of `err` for the analyst: its code, its name and the engine's sentence, with the
 * texts the server ran it as (`ran`: wrappers, appended SETTINGS) taken out and no path of `roots`.
 */
export function sqlFailure(err: unknown, ran: string[], roots: string[], query = ''): SqlFailure {
  const name = engineName(err);
  let code: number;
  let message: string;
  if (err instanceof VaultstreamError && err.code === 'READ_ONLY') {
    code = 164;
    message = err.message;
  } else if (err instanceof VaultstreamError && err.code === 'STORE_UNAVAILABLE') {
    code = 1001;
    message = err.message;
  } else if ((err as Error)?.name === 'AbortError' || (err as Error)?.name === 'ChdbAbortError') {
    code = 394;
    message = 'Query was cancelled';
  } else {
    const c = err instanceof VaultstreamError ? err.details?.clickhouseCode : undefined;
    code = typeof c === 'number' ? c : (clickhouseCodeOf(err) ?? 1001);
    message = engineMessage(err instanceof VaultstreamError ? (err.cause ?? err) : err);
  }
  // The canonical form's parse of the query names it as `SELECT formatQuerySingleLine('...')`.
  if (query) message = message.replaceAll(`SELECT formatQuerySingleLine(${literal(query)})`, query);
  message = message.replace(/SELECT formatQuerySingleLine\('/g, '');
  for (const text of [...ran].sort((a, b) => b.length - a.length))
    if (text) message = message.replaceAll(text, '');
  return { code, message: withoutPaths(message, roots), name };
}
