/**
 * A JSON-RPC proxy in front of a real node that misbehaves on cue, for the EVM fault and
 * transport tests: per request, `rule` may answer with an HTTP status (and headers), a
 * JSON-RPC error, a JSON answer of its own, or a delay before forwarding, or rewrite the node's
 * answer; anything else is forwarded as it is.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface Misbehaviour {
  status?: number;
  headers?: Record<string, string>;
  delayMs?: number;
  rpcError?: { code: number; message: string };
  /** Answered as it is, instead of forwarding. */
  json?: unknown;
  /** The node's answer (parsed), rewritten before it is sent on. */
  rewrite?: (answer: unknown) => unknown;
}
/** A request body: one call, or a batch. */
export type RpcBody = { id?: number; method?: string; params?: unknown[] } | { method: string }[];
export type Rule = (body: RpcBody) => Misbehaviour | undefined;

export interface RpcProxy {
  url: string;
  server: Server;
  /** Every request body, in order. */
  seen: RpcBody[];
}

/** Starts the proxy on 127.0.0.1 in front of `target`; close `server` when done. */
export async function startRpcProxy(target: string, rule: Rule): Promise<RpcProxy> {
  const seen: RpcBody[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString();
    const body = JSON.parse(text) as RpcBody;
    seen.push(body);
    const m = rule(body);
    if (m?.delayMs) await new Promise((r) => setTimeout(r, m.delayMs));
    if (m?.status) {
      res.writeHead(m.status, m.headers ?? {}).end('unavailable');
      return;
    }
    if (m?.rpcError) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: (body as { id?: number }).id, error: m.rpcError }));
      return;
    }
    if (m?.json !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(m.json));
      return;
    }
    try {
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: text,
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      const got = await answer.text();
      res.end(m?.rewrite ? JSON.stringify(m.rewrite(JSON.parse(got))) : got);
    } catch {
      if (!res.headersSent) res.writeHead(502).end('upstream closed');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server, seen };
}
