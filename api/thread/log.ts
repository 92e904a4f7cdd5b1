/**
 * Logging on the API's thread: a pino logger at the main logger's level whose lines are sent to
 * the main thread and written there by the main logger (`relayLog`), so they go where the
 * process's other lines go (stderr, or above a progress display) in the same format.
 */
import pino, { type Logger } from 'pino';
import type { Peer } from './rpc.ts';

/** The API thread's logger: JSON lines to the main thread. */
export function threadLogger(peer: Peer, level: string): Logger {
  return pino({ level, base: undefined }, { write: (line: string) => peer.notify('log', line) });
}

/** Writes a line of the API thread's logger with `log` (the main thread's). */
export function relayLog(log: Logger, line: unknown): void {
  try {
    const { level, msg, time: _time, ...fields } = JSON.parse(String(line)) as Record<string, unknown>;
    const label = pino.levels.labels[Number(level)] ?? 'info';
    (log as unknown as Record<string, (o: object, m?: string) => void>)[label]?.call(
      log,
      fields,
      msg as string,
    );
  } catch {
    log.info(String(line));
  }
}
