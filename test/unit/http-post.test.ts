/**
 * rpc/http-post.ts, the JSON-RPC transport's HTTP client, against real local servers: the body
 * and headers sent, compressed answers inflated, the status and headers read, an answer cut off
 * mid-body and an aborted request both rejected.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { httpPost } from '../../rpc/http-post.ts';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc?x=1`;
}

describe('httpPost', () => {
  it('sends the body and headers, and reads plain, gzip and br answers', async () => {
    const seen: { url?: string; type?: string; body: string }[] = [];
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'é'.repeat(50_000) });
    const url = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          url: req.url,
          type: req.headers['content-type'],
          body: Buffer.concat(chunks).toString(),
        });
        const enc = String(req.headers['x-want'] ?? '');
        const data =
          enc === 'gzip' ? gzipSync(answer) : enc === 'br' ? brotliCompressSync(answer) : Buffer.from(answer);
        res.writeHead(429, { 'retry-after': '3', ...(enc ? { 'content-encoding': enc } : {}) }).end(data);
      });
    });
    for (const want of ['', 'gzip', 'br']) {
      const res = await httpPost(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-want': want },
        body: '{"method":"eth_blockNumber"}',
      });
      expect(res.status).toBe(429);
      expect(res.ok).toBe(false);
      expect(res.headers.get('Retry-After')).toBe('3');
      expect(await res.text()).toBe(answer);
    }
    expect(seen).toEqual(
      Array(3).fill({ url: '/rpc?x=1', type: 'application/json', body: '{"method":"eth_blockNumber"}' }),
    );
  });

  it('rejects an answer cut off mid-body, and an aborted request', async () => {
    const cut = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"jsonrpc":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    await expect(httpPost(cut, { body: '{}' })).rejects.toThrow();
    const slow = await serve(() => {});
    const started = performance.now();
    await expect(httpPost(slow, { body: '{}', signal: AbortSignal.timeout(100) })).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
