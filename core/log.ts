import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

let ttyRoute: ((line: string) => void) | undefined;

/**
 * Sends the log lines meant for the terminal through `fn` (a progress display prints
 * them above its bars) until called with undefined.
 */
export function routeTtyLogs(fn: ((line: string) => void) | undefined): void {
  ttyRoute = fn;
}

/** stderr, or the route a progress display set. */
const ttyStderr = new Writable({
  write(chunk: Buffer | string, _enc, cb) {
    const text = String(chunk);
    if (ttyRoute) ttyRoute(text.endsWith('\n') ? text : `${text}\n`);
    else process.stderr.write(text);
    cb();
  },
});

/**
 * Logs on stderr (stdout stays free for command output such as `sql`): human-readable
 * lines (pino-pretty) when stderr is a terminal, JSON lines otherwise.
 * `LOG_FORMAT=pretty|json` chooses explicitly.
 */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', name = 'vaultstream'): Logger {
  const tty = Boolean(process.stderr.isTTY);
  const format = process.env.LOG_FORMAT ?? (tty ? 'pretty' : 'json');
  if (format === 'pretty') {
    const stream = pretty({
      destination: tty ? ttyStderr : 2,
      sync: true,
      colorize: tty,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,name',
      singleLine: true,
    });
    return pino({ name, level }, stream);
  }
  return pino({ name, level, base: { pid: process.pid } }, tty ? ttyStderr : pino.destination(2));
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
