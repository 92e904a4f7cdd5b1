/** A small JSON HTTP server on 127.0.0.1 (a free port) for the devnet's service stand-ins. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JsonRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

export interface JsonServer {
  url: string;
  close(): Promise<void>;
}

/** Starts a server answering every request with `handle` (a throw answers 500). */
export async function startJsonServer(
  handle: (req: JsonRequest) => { status?: number; body: unknown },
): Promise<JsonServer> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://localhost');
      let status = 200;
      let body: unknown;
      try {
        const text = Buffer.concat(chunks).toString();
        ({ status = 200, body } = handle({
          method: req.method ?? 'GET',
          path: u.pathname,
          query: u.searchParams,
          body: text ? JSON.parse(text) : undefined,
        }));
      } catch (e) {
        status = 500;
        body = { error: (e as Error).message };
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
