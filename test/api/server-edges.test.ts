/**
 * The server-level edges of the error contract (api/http/edges.ts), on the server
 * production runs (api/server.ts `listen`): what Node's HTTP parser refuses before any
 * handler (a long URL, large headers, a malformed request) is JSON with a code, never an
 * empty body or a reset connection.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/api-raw.ts';
import { startTestApp, type TestApp } from './app.ts';

let app: TestApp;
let port: number;
beforeAll(async () => {
  app = await startTestApp();
  port = Number(new URL(app.url).port);
});
afterAll(() => app.close());

/** Sends `request` as raw bytes; the status, headers and body the server wrote before closing. */
function rawExchange(request: string): Promise<{ status: number; head: string; json: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split);
      let json: any;
      try {
        json = JSON.parse(text.slice(split + 4));
      } catch {
        json = undefined;
      }
      resolve({ status: Number(head.split(' ')[1]), head, json });
      socket.destroy();
    });
  });
}

function expectJsonError(r: { status: number; json: any }, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.json).toMatchObject({ code });
  expect(typeof r.json.error).toBe('string');
}

describe('errors Node refuses before routing are JSON with a code', () => {
  it('a URL of 20 KB: 414 URI_TOO_LONG (fetch, as a client sends it)', async () => {
    const res = await fetch(`${app.url}/v1/vaults?pad=${'a'.repeat(20_000)}`);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expectJsonError({ status: res.status, json: await res.json() }, 414, 'URI_TOO_LONG');
  });

  it('a URL of 20 KB on a raw socket, with more requests pipelined behind it: 414 then close', async () => {
    const long = `GET /v1/vaults?pad=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`;
    const r = await rawExchange(long + 'GET /livez HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(50));
    expectJsonError(r, 414, 'URI_TOO_LONG');
    expect(r.head).toMatch(/connection: close/i);
  });

  it('a URL past the parser limit (200 KB): 414 URI_TOO_LONG', async () => {
    const r = await rawExchange(`GET /v1/vaults?pad=${'a'.repeat(200_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectJsonError(r, 414, 'URI_TOO_LONG');
  });

  it('headers of 20 KB (Node: 431 with an empty body): 431 HEADERS_TOO_LARGE', async () => {
    const res = await rawRequest(`${app.url}/v1/vaults`, { headers: { 'x-big': 'b'.repeat(20_000) } });
    expect(String(res.headers['content-type'])).toMatch(/application\/json/);
    expectJsonError(res, 431, 'HEADERS_TOO_LARGE');
  });

  it('headers past the parser limit (200 KB): 431 HEADERS_TOO_LARGE', async () => {
    const headers = Array.from({ length: 100 }, (_, i) => `x-h${i}: ${'c'.repeat(2000)}\r\n`).join('');
    const r = await rawExchange(`GET /v1/vaults HTTP/1.1\r\nHost: x\r\n${headers}\r\n`);
    expectJsonError(r, 431, 'HEADERS_TOO_LARGE');
  });

  it('a malformed request line: 400 BAD_REQUEST', async () => {
    expectJsonError(await rawExchange('NOT HTTP AT ALL\r\n\r\n'), 400, 'BAD_REQUEST');
  });

  it('a URL and headers within the limits are served as before', async () => {
    const res = await rawRequest(`${app.url}/livez?pad=${'a'.repeat(7_000)}`, {
      headers: { 'x-big': 'b'.repeat(12_000) },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
  });
});
