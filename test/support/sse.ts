/**
 * A server-sent events client for the tests, over node:http, parsing the stream as the
 * specification says (WHATWG HTML, "Server-sent events": lines of `field: value`, `:` comments, an
 * event dispatched at a blank line, `id` kept as the last event id), independent of the server's
 * code. It records every event and comment with the time it arrived.
 */
import { type ClientRequest, type IncomingMessage, request } from 'node:http';

export interface SseEvent {
  /** The last event id after this event (as a browser's `lastEventId`). */
  id: string;
  event: string;
  data: string;
  /** performance.now() when it arrived. */
  at: number;
}

export interface SseClient {
  status: number;
  headers: IncomingMessage['headers'];
  events: SseEvent[];
  comments: string[];
  retry: number | undefined;
  /** True once the server ended or dropped the connection. */
  ended: boolean;
  /** The first event (from `from` on) that `match` accepts, waiting for it up to `timeoutMs`. */
  next(match: (e: SseEvent) => boolean, timeoutMs?: number, from?: number): Promise<SseEvent>;
  close(): void;
}

/** Opens `url` as an event stream (`headers`: Last-Event-ID and the like). */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined;
    const waiters = new Set<() => void>();
    const wake = () => {
      for (const w of waiters) w();
    };
    req = request(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false }, (res) => {
      const client: SseClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        comments: [],
        retry: undefined,
        ended: false,
        next(match, timeoutMs = 30_000, from = 0) {
          return new Promise((ok, fail) => {
            const look = () => {
              const found = client.events.slice(from).find(match);
              if (found) {
                done();
                ok(found);
              } else if (client.ended) {
                done();
                fail(new Error(`the stream ended; events: ${client.events.map((e) => e.id).join(' ')}`));
              }
            };
            const timer = setTimeout(() => {
              done();
              fail(
                new Error(
                  `no such event in ${timeoutMs} ms; events: ${client.events.map((e) => `${e.event}#${e.id}`).join(' ')}`,
                ),
              );
            }, timeoutMs);
            const done = () => {
              clearTimeout(timer);
              waiters.delete(look);
            };
            waiters.add(look);
            look();
          });
        },
        close() {
          req?.destroy();
        },
      };
      let buffer = '';
      let lastId = '';
      let event = { type: '', data: [] as string[] };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl = buffer.search(/\r\n|\r|\n/);
        while (nl >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
          if (line === '') {
            if (event.data.length)
              client.events.push({
                id: lastId,
                event: event.type || 'message',
                data: event.data.join('\n'),
                at: performance.now(),
              });
            event = { type: '', data: [] };
          } else if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
          else {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') lastId = value;
            else if (field === 'event') event.type = value;
            else if (field === 'data') event.data.push(value);
            else if (field === 'retry' && /^\d+$/.test(value)) client.retry = Number(value);
          }
          nl = buffer.search(/\r\n|\r|\n/);
        }
        wake();
      });
      const ended = () => {
        client.ended = true;
        wake();
      };
      res.on('end', ended);
      res.on('close', ended);
      res.on('error', ended);
      resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}
