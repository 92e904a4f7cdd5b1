/**
 * JSON-RPC (HTTP, single and batch) and websocket (`programSubscribe`) in front of a
 * `SyntheticMint`: the methods the Solana follower calls, in the wire shapes of a node
 * (getSlot, getAccountInfo, getProgramAccounts with base64 and dataSlice, written as it is
 * generated rather than built whole, getSignaturesForAddress by the mint or by a token account,
 * getTransaction jsonParsed, getBlock, getBlockTime). It counts calls and answer bytes by method
 * and fails on demand: an account left out of the full reads (the top holder), a head slot
 * behind, HTTP 429, a hung answer, an answer cut short, no websocket. Several servers can front
 * one mint (a good node and a faulty one).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { SyntheticMint, SynthTx } from './synthetic.ts';
import { SyntheticWire } from './synthetic-wire.ts';

export interface SyntheticFaults {
  /** Full reads leave out the account with the largest amount. */
  omitTop?: boolean;
  /** Slots answered this far behind the head (getSlot and answers' context). */
  slotsBehind?: number;
  /** The next this many requests answer HTTP 429 (Retry-After 0). */
  rateLimited?: number;
  /** The next this many full reads stop after part of the answer (the connection is cut). */
  cutReads?: number;
  /** The next this many full reads send part of the answer, then nothing more. */
  stallReads?: number;
  /** No websocket: upgrades are refused. */
  noWebsocket?: boolean;
  /** Full reads come in parts of 500 accounts this many ms apart (a slow but moving answer). */
  paceMs?: number;
}

export interface SyntheticStats {
  requests: number;
  calls: Record<string, number>;
  /** Answer bytes by method (a batch's split evenly over its calls). */
  bytes: Record<string, number>;
  bytesTotal: number;
  /** Request bytes received (HTTP bodies). */
  bytesIn: number;
  /** Websocket notification bytes. */
  wsBytes: number;
  /** The latest calls (at most 2,000), oldest first. */
  log: { method: string; params: unknown[] }[];
}

export interface SyntheticRpc {
  url: string;
  faults: SyntheticFaults;
  stats: SyntheticStats;
  resetStats(): void;
  close(): Promise<void>;
}

type Call = { id?: unknown; method: string; params?: unknown[] };

/** Serves `mint` on 127.0.0.1 (`port` 0: a free one). */
export async function startSyntheticRpc(mint: SyntheticMint, port = 0): Promise<SyntheticRpc> {
  const faults: SyntheticFaults = {};
  const stats: SyntheticStats = {
    requests: 0,
    calls: {},
    bytes: {},
    bytesTotal: 0,
    bytesIn: 0,
    wsBytes: 0,
    log: [],
  };
  const hung = new Set<ServerResponse>();
  const count = (method: string, bytes: number) => {
    stats.bytes[method] = (stats.bytes[method] ?? 0) + bytes;
    stats.bytesTotal += bytes;
  };
  const head = () => mint.slot - (faults.slotsBehind ?? 0);
  const wire = new SyntheticWire(mint);
  const entry = wire.entry.bind(wire);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      stats.requests++;
      stats.bytesIn += chunks.reduce((n, c) => n + c.length, 0);
      if (faults.rateLimited) {
        faults.rateLimited--;
        res.writeHead(429, { 'retry-after': '0' }).end('busy');
        return;
      }
      let body: Call | Call[];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      const calls = Array.isArray(body) ? body : [body];
      for (const c of calls) {
        stats.calls[c.method] = (stats.calls[c.method] ?? 0) + 1;
        stats.log.push({ method: c.method, params: c.params ?? [] });
      }
      if (stats.log.length > 2000) stats.log.splice(0, stats.log.length - 2000);
      if (!Array.isArray(body) && body.method === 'getProgramAccounts') return fullRead(body, res);
      const text = JSON.stringify(Array.isArray(body) ? body.map(one) : one(body));
      for (const c of calls) count(c.method, text.length / calls.length);
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    });
  });

  function one(c: Call) {
    return { jsonrpc: '2.0', id: c.id ?? null, ...answer(c.method, c.params ?? []) };
  }

  function answer(method: string, params: unknown[]): { result?: unknown; error?: unknown } {
    const cfg = (params[method === 'getSlot' ? 0 : 1] ?? {}) as Record<string, unknown>;
    const context = { apiVersion: '2.0.15', slot: head() };
    switch (method) {
      case 'getSlot':
        return { result: head() };
      case 'getAccountInfo':
        return { result: { context, value: wire.accountInfo(String(params[0]), cfg) } };
      case 'getSignaturesForAddress':
        return { result: wire.signatures(String(params[0]), cfg, head()) };
      case 'getTransaction': {
        const i = mint.bySignature.get(String(params[0]));
        return { result: i === undefined ? null : wire.transaction(mint.txs[i]) };
      }
      case 'getBlock':
      case 'getBlockTime': {
        const slot = Number(params[0]);
        if (!mint.hasBlock(slot) || slot > head())
          return {
            error: {
              code: -32007,
              message: `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`,
            },
          };
        if (method === 'getBlockTime') return { result: mint.timeOf(slot) };
        return {
          result: {
            blockHeight: slot,
            blockTime: mint.timeOf(slot),
            blockhash: `${slot}`.padStart(43, '1'),
            parentSlot: slot - 1,
            previousBlockhash: `${slot - 1}`.padStart(43, '1'),
          },
        };
      }
      default:
        return { error: { code: -32601, message: 'Method not found' } };
    }
  }

  /** Whether a counted fault applies now (and one fewer is left). */
  function once(fault: 'cutReads' | 'stallReads'): boolean {
    if (!faults[fault]) return false;
    faults[fault]--;
    return true;
  }

  /** getProgramAccounts: written in parts as they are made, never built whole. */
  function fullRead(call: Call, res: ServerResponse): void {
    const cfg = (call.params?.[1] ?? {}) as {
      dataSlice?: { offset: number; length: number };
      minContextSlot?: number;
      encoding?: string;
    };
    const slice =
      cfg.encoding === 'jsonParsed' ? 'jsonParsed' : (cfg.dataSlice ?? { offset: 0, length: wire.space });
    const slot = head();
    if ((cfg.minContextSlot ?? 0) > slot) {
      const text = JSON.stringify({
        jsonrpc: '2.0',
        id: call.id,
        error: { code: -32016, message: 'Minimum context slot has not been reached' },
      });
      count('getProgramAccounts', text.length);
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      return;
    }
    const cut = once('cutReads');
    const stall = once('stallReads');
    const skip = faults.omitTop ? mint.topAccount() : -1;
    const pace = faults.paceMs ?? 0;
    const n = mint.count;
    res.writeHead(200, { 'content-type': 'application/json' });
    let i = 0;
    let first = true;
    const write = (s: string) => {
      count('getProgramAccounts', s.length);
      return res.write(s);
    };
    write(`{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15","slot":${slot}},"value":[`);
    const more = () => {
      for (;;) {
        const parts: string[] = [];
        for (let k = 0; k < (pace ? 500 : 2000) && i < n; i++) {
          if (!mint.alive[i] || i === skip) continue;
          parts.push((first ? '' : ',') + entry(i, slice));
          first = false;
          k++;
        }
        if ((cut || stall) && i >= n / 2) {
          write(parts.join(''));
          if (cut) res.destroy();
          else hung.add(res);
          return;
        }
        if (i >= n) {
          write(parts.join(''));
          write(`]},"id":${JSON.stringify(call.id ?? null)}}`);
          res.end();
          return;
        }
        if (!write(parts.join(''))) {
          res.once('drain', more);
          return;
        }
        if (pace) {
          setTimeout(more, pace);
          return;
        }
      }
    };
    more();
  }

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req: IncomingMessage, socket, headBuf) => {
    if (faults.noWebsocket) return socket.destroy();
    wss.handleUpgrade(req, socket, headBuf, (ws) => {
      const subs = new Map<number, { offset: number; length: number }>();
      let nextSub = 1;
      ws.on('message', (data) => {
        const msg = JSON.parse(String(data)) as Call;
        if (msg.method !== 'programSubscribe')
          return ws.send(
            JSON.stringify({
              jsonrpc: '2.0',
              id: msg.id,
              error: { code: -32601, message: 'Method not found' },
            }),
          );
        const cfg = (msg.params?.[1] ?? {}) as { dataSlice?: { offset: number; length: number } };
        const id = nextSub++;
        subs.set(id, cfg.dataSlice ?? { offset: 0, length: wire.space });
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: id }));
      });
      const notify = (t: SynthTx) => {
        if (t.err) return;
        for (const [sub, slice] of subs)
          for (const c of t.changes) {
            if (c.post === undefined) continue; // a closed account no longer matches the filters
            const value = JSON.parse(entry(c.account, slice));
            const text = JSON.stringify({
              jsonrpc: '2.0',
              method: 'programNotification',
              params: { result: { context: { slot: t.slot }, value }, subscription: sub },
            });
            stats.wsBytes += text.length;
            ws.send(text);
          }
      };
      mint.listeners.push(notify);
      ws.on('close', () => mint.listeners.splice(mint.listeners.indexOf(notify), 1));
    });
  });

  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    faults,
    stats,
    resetStats() {
      Object.assign(stats, {
        requests: 0,
        calls: {},
        bytes: {},
        bytesTotal: 0,
        bytesIn: 0,
        wsBytes: 0,
        log: [],
      });
    },
    async close() {
      for (const r of hung) r.destroy();
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
