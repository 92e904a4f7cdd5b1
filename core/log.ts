import pino, { type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stderr (stdout stays free for command output such as `sql`). */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', name = 'vaultstream'): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination(2));
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
