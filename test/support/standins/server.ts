/**
 * A local HTTP stand-in on 127.0.0.1:0: routes a request to `handle`, records it,
 * and can be told to fail the next requests (HTTP status, or no answer at all) so
 * tests drive the callers' fault handling.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandinRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
  headers: IncomingMessage['headers'];
}

export interface StandinAnswer {
  status?: number;
  body: unknown;
}

/** A planned failure: an HTTP status with an empty-ish body, or `hang` (never answer). */
export type Fault = { status: number } | { hang: true };

export interface Standin {
  url: string;
  /** Every request received, in order. */
  requests: StandinRequest[];
  /** Fails the next `times` requests matching `match` (default: any). */
  failNext(fault: Fault, times?: number, match?: (r: StandinRequest) => boolean): void;
  /** Drops the planned failures not used yet. */
  clearFaults(): void;
  close(): Promise<void>;
}

/** Starts a stand-in answering with `handle`. */
export async function startStandin(handle: (req: StandinRequest) => StandinAnswer): Promise<Standin> {
  const faults: { fault: Fault; left: number; match: (r: StandinRequest) => boolean }[] = [];
  const hung = new Set<ServerResponse>();
  const requests: StandinRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://localhost');
      const text = Buffer.concat(chunks).toString();
      const r: StandinRequest = {
        method: req.method ?? 'GET',
        path: u.pathname,
        query: u.searchParams,
        body: text ? JSON.parse(text) : undefined,
        headers: req.headers,
      };
      requests.push(r);
      const planned = faults.find((f) => f.left > 0 && f.match(r));
      if (planned) {
        planned.left--;
        if ('hang' in planned.fault) {
          hung.add(res);
          return;
        }
        res.writeHead(planned.fault.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'stand-in fault' }));
        return;
      }
      const answer = handle(r);
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    failNext(fault, times = 1, match = () => true) {
      faults.push({ fault, left: times, match });
    },
    clearFaults() {
      faults.length = 0;
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
