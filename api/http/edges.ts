/**
 * The server-level edges of the error contract (docs/architecture.md, API contract): what
 * Node's HTTP parser refuses before any handler runs. Node answers those itself with an
 * empty body (431 for headers over its limit, 400 for a malformed request) and resets the
 * connection when a client is still sending; here every such answer is the contract's JSON.
 *
 * The parser's limit (`PARSER_LIMIT_BYTES`) is above the limits the API answers itself, so a
 * long URL or large headers reach `guardRequest` whole and get a precise 414 or 431; only
 * requests past the parser's limit go to `onClientError`, which writes the JSON on the socket.
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { API_ERROR_STATUS, type ApiErrorCode, type ErrorBody } from './errors.ts';

/** Longest request target answered (bytes): a longer one gets 414 `URI_TOO_LONG`. */
export const MAX_URL_BYTES = 8 * 1024;
/** Most bytes of header lines answered (Node's default limit): more get 431 `HEADERS_TOO_LARGE`. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Node's parser limit for the request line and headers together (its `maxHeaderSize`). */
export const PARSER_LIMIT_BYTES = 64 * 1024;
/** How long a refused connection is drained (what the client still sends is read and dropped) before it is closed. */
const LINGER_MS = 2_000;

/** The answer `{ error, code }` as headers and body, for a response or a raw socket. */
function errorPayload(code: ApiErrorCode, error: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ error, code } satisfies ErrorBody);
  return {
    body,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      'Cache-Control': 'no-store',
      Connection: 'close',
    },
  };
}

/** Bytes of the header lines as they came (`name: value\r\n` each). */
function headerBytes(req: IncomingMessage): number {
  let n = 0;
  for (const s of req.rawHeaders) n += Buffer.byteLength(s) + 2;
  return n;
}

/**
 * Answers a request over the URL or header limit with its JSON error; true when it did (the
 * request goes no further), false for every other request.
 */
export function guardRequest(req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url ?? '';
  const [code, error] =
    Buffer.byteLength(url) > MAX_URL_BYTES
      ? (['URI_TOO_LONG', `request URL longer than ${MAX_URL_BYTES} bytes`] as const)
      : headerBytes(req) > MAX_HEADER_BYTES
        ? (['HEADERS_TOO_LARGE', `request headers larger than ${MAX_HEADER_BYTES} bytes`] as const)
        : [];
  if (!code) return false;
  const { body, headers } = errorPayload(code, error);
  res.writeHead(API_ERROR_STATUS[code], headers);
  res.end(body);
  return true;
}

/** The parser error's answer: Node's own choice of status, with the contract's code. */
function clientErrorAnswer(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): [ApiErrorCode, string] {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // The request line not ended within what the parser buffered: the URL is what is too long.
    const packet = err.rawPacket?.toString('latin1') ?? '';
    const firstLine = packet.indexOf('\r\n');
    return firstLine < 0 || firstLine > MAX_URL_BYTES
      ? ['URI_TOO_LONG', `request URL longer than ${MAX_URL_BYTES} bytes`]
      : ['HEADERS_TOO_LARGE', `request headers larger than ${MAX_HEADER_BYTES} bytes`];
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return ['REQUEST_TIMEOUT', 'request not received in time'];
  return ['BAD_REQUEST', 'malformed HTTP request'];
}

/**
 * The server's 'clientError' listener: the JSON error on the socket, then a short drain of
 * what the client still sends (closing at once would reset the connection before the
 * client reads the answer).
 */
export function onClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [code, error] = clientErrorAnswer(err);
  const status = API_ERROR_STATUS[code];
  const { body, headers } = errorPayload(code, error);
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
  socket.on('data', () => undefined);
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
