/**
 * A deterministic sparse EVM chain served as JSON-RPC on loopback, a stand-in for a real chain's
 * provider, for the sparse-chain benchmark (bench/sparse-backfill.ts) and tests: `blocks` blocks `blockTimeMs` apart (Arbitrum
 * makes about four a second), hashes with parent links, and `events` share `Transfer` logs (mints
 * to a few hundred holders) at blocks spread over the chain by a seeded generator. It answers
 * the methods the ingester calls (eth_blockNumber, eth_chainId, eth_getBlockByNumber, eth_getLogs,
 * eth_getCode, eth_call with Multicall3's aggregate3, batches of them) and counts the calls by
 * method (a batch counts each item) and the HTTP requests (by the methods each holds). Like Alchemy, an eth_getLogs answer holds at most `maxLogs`
 * logs: a range holding more is refused with the provider's wording and the range that would
 * work ("this block range should work: [0x.., 0x..]"); `maxSpan` refuses wide ranges the same way.
 * Its logs carry `blockTimestamp` as recent geth, reth and anvil's do, or not (`logTimestamps:
 * false`, as older nodes and many providers). With `maxCallsPerSecond` it throttles as a provider
 * does: a request over its budget of calls is refused with HTTP 429.
 * Nothing is stored per block: a header is computed when asked for.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeFunctionData, encodeFunctionResult, type Hex, numberToHex, toEventSelector } from 'viem';
import { multicall3Abi } from './abis.ts';
import { Rng } from './sim/rng.ts';

export interface SparseChainOptions {
  blocks: number;
  events: number;
  blockTimeMs?: number;
  /** Block 0's time, seconds. */
  genesisTime?: number;
  seed?: number;
  chainId?: number;
  /** The share token emitting the Transfers. */
  token?: Hex;
  /** The block the token's code appears at (eth_getCode). */
  deployBlock?: number;
  /** Most logs one eth_getLogs answer holds (Alchemy: 10,000). */
  maxLogs?: number;
  /** Widest eth_getLogs range accepted (none by default). */
  maxSpan?: number;
  /** Distinct holders the mints go to. */
  holders?: number;
  /** Added to every HTTP answer (a provider's round trip), ms. */
  latencyMs?: number;
  /** Whether each log carries its block's `blockTimestamp` (default true). */
  logTimestamps?: boolean;
  /**
   * A provider's budget of calls per second, each member of a batch one (as providers bill and
   * throttle): a request over what is left of it (a bucket of one second's calls, refilled as
   * time passes) is refused whole with HTTP 429. None by default.
   */
  maxCallsPerSecond?: number;
}

export interface SparseChain {
  url: string;
  head: number;
  token: Hex;
  /** The block of each event, ascending. */
  eventBlocks: number[];
  /** JSON-RPC calls answered, by method. */
  counts: Map<string, number>;
  /** HTTP requests answered (a batch is one). */
  requests: number;
  /** HTTP requests answered, by method (a batch counts once for each method it holds). */
  requestsByMethod: Map<string, number>;
  /** HTTP requests refused with 429 (over `maxCallsPerSecond`). */
  throttled: number;
  /** Each eth_getLogs range answered (not refused), in order. */
  logRanges: [number, number][];
  /** performance.now() of the first request, or 0. */
  firstRequestAt: number;
  timeOf(block: number): number;
  stop(): Promise<void>;
}

/** The `vaults[]` entry (core/config.ts) of a sparse chain's token on chain 42161, as the bench and tests configure it. */
export function sparseVaultConfig(token: Hex) {
  return {
    slug: 'sparse',
    name: 'Sparse',
    symbol: 'SPARSE',
    decimals: 6,
    vaultAddress: token,
    accountantAddress: `0x${'0'.repeat(36)}acc0`,
    chainIds: [42161],
  };
}

/**
 * The `chains[]` entry (core/config.ts) of a sparse chain served at `url`, as a provider that bills
 * and throttles calls rather than requests: no request rate of the service's own
 * (`maxRequestsPerSecond: 0`; `maxConcurrentRequests` at once, by default the service's 4), and no
 * block-span limit on eth_getLogs, only its cap on logs per answer (as Alchemy's).
 */
export function sparseChainConfig(url: string, maxConcurrentRequests?: number) {
  return {
    chainId: 42161,
    name: 'sparse',
    rpcUrls: [url],
    confirmations: 0,
    maxRequestsPerSecond: 0,
    maxBlockRange: 1_000_000_000,
    ...(maxConcurrentRequests ? { maxConcurrentRequests } : {}),
  };
}

const TRANSFER = toEventSelector('Transfer(address,address,uint256)');
const MULTICALL3 = '0xca11bde05977b3631167028862be2a173976ca11';
const word = (hex: string) => `0x${hex.padStart(64, '0')}`;

/** Starts the chain's server on 127.0.0.1 (an ephemeral port). */
export async function startSparseChain(o: SparseChainOptions): Promise<SparseChain> {
  const blockTimeMs = o.blockTimeMs ?? 250;
  const genesis = o.genesisTime ?? 1_735_689_600; // 2025-01-01T00:00:00Z
  const seed = o.seed ?? 22;
  const token = (o.token ?? '0x5a1e000000000000000000000000000000005a1e').toLowerCase() as Hex;
  const maxLogs = o.maxLogs ?? 10_000;
  const holders = o.holders ?? 500;
  const head = o.blocks - 1;
  const rng = new Rng(seed);
  // Event k falls in the k-th of `events` equal slices of blocks 1..head, at a seeded place.
  const slice = head / o.events;
  const eventBlocks = Array.from({ length: o.events }, (_, k) =>
    Math.min(head, 1 + Math.floor((k + rng.next()) * slice)),
  );
  const hashOf = (n: number): Hex =>
    n < 0 ? `0x${'0'.repeat(64)}` : `0x${createHash('sha256').update(`${seed}:block:${n}`).digest('hex')}`;
  const timeOf = (n: number) => genesis + Math.floor((n * blockTimeMs) / 1000);
  const holderOf = (k: number) =>
    `000000000000000000000000${createHash('sha256')
      .update(`h${k % holders}`)
      .digest('hex')
      .slice(0, 40)}`;
  /** Index of the first event at or after block `n`. */
  const firstAt = (n: number) => {
    let lo = 0;
    let hi = eventBlocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (eventBlocks[mid] < n) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const chain: SparseChain = {
    url: '',
    head,
    token,
    eventBlocks,
    counts: new Map(),
    requests: 0,
    requestsByMethod: new Map(),
    throttled: 0,
    logRanges: [],
    firstRequestAt: 0,
    timeOf,
    stop: async () => {},
  };

  const header = (n: number) =>
    n > head || n < 0
      ? null
      : {
          number: numberToHex(n),
          hash: hashOf(n),
          parentHash: hashOf(n - 1),
          timestamp: numberToHex(timeOf(n)),
          miner: `0x${'0'.repeat(40)}`,
          gasLimit: '0x1c9c380',
          gasUsed: '0x0',
          transactions: [],
        };

  const logs = (filter: { fromBlock: Hex; toBlock: Hex; address?: Hex | Hex[]; topics?: unknown[] }) => {
    const from = Number(filter.fromBlock);
    const to = Math.min(Number(filter.toBlock), head);
    if (o.maxSpan && to - from + 1 > o.maxSpan)
      throw rangeError(
        `You can make eth_getLogs requests with up to a ${o.maxSpan} block range. Based on your parameters, this block range should work: [${numberToHex(from)}, ${numberToHex(from + o.maxSpan - 1)}]`,
      );
    const addresses = [filter.address ?? []].flat().map((a) => a.toLowerCase());
    const topic0 = [filter.topics?.[0] ?? []].flat() as string[];
    if ((addresses.length && !addresses.includes(token)) || (topic0.length && !topic0.includes(TRANSFER)))
      return [];
    const a = firstAt(from);
    const b = firstAt(to + 1);
    if (b - a > maxLogs) {
      // The widest range from `from` holding at most maxLogs logs ends before the first log over it.
      const last = Math.max(from, eventBlocks[a + maxLogs] - 1);
      throw rangeError(
        'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. ' +
          `Based on your parameters and the response size limit, this block range should work: [${numberToHex(from)}, ${numberToHex(last)}]`,
      );
    }
    chain.logRanges.push([from, to]);
    const out = [];
    let index = 0;
    for (let k = a; k < b; k++) {
      const n = eventBlocks[k];
      index = k > a && eventBlocks[k - 1] === n ? index + 1 : 0;
      out.push({
        address: token,
        topics: [TRANSFER, word(''), `0x${holderOf(k)}`],
        data: word((1_000_000 + k).toString(16)),
        blockNumber: numberToHex(n),
        blockHash: hashOf(n),
        ...(o.logTimestamps === false ? {} : { blockTimestamp: numberToHex(timeOf(n)) }),
        transactionHash: `0x${createHash('sha256').update(`${seed}:tx:${k}`).digest('hex')}`,
        transactionIndex: numberToHex(index),
        logIndex: numberToHex(index),
        removed: false,
      });
    }
    return out;
  };

  const call = (tx: { to?: string; data?: Hex }) => {
    if (tx.to?.toLowerCase() !== MULTICALL3 || !tx.data) return '0x';
    const { args } = decodeFunctionData({ abi: multicall3Abi, data: tx.data });
    // No contract here answers anything: every read fails, as on an address without code.
    const results = (args[0] as unknown[]).map(() => ({ success: false, returnData: '0x' as Hex }));
    return encodeFunctionResult({ abi: multicall3Abi, functionName: 'aggregate3', result: results });
  };

  const answer = (req: { id?: unknown; method: string; params?: unknown[] }) => {
    chain.counts.set(req.method, (chain.counts.get(req.method) ?? 0) + 1);
    const p = req.params ?? [];
    try {
      switch (req.method) {
        case 'eth_blockNumber':
          return { result: numberToHex(head) };
        case 'eth_chainId':
          return { result: numberToHex(o.chainId ?? 42161) };
        case 'eth_getBlockByNumber':
          return { result: header(p[0] === 'latest' ? head : Number(p[0])) };
        case 'eth_getLogs':
          return { result: logs(p[0] as never) };
        case 'eth_getCode': {
          const at = p[1] === 'latest' ? head : Number(p[1]);
          const deployed = String(p[0]).toLowerCase() === token && at >= (o.deployBlock ?? 0);
          return { result: deployed ? '0x6080604052' : '0x' };
        }
        case 'eth_call':
          return { result: call(p[0] as never) };
        default:
          return { error: { code: -32601, message: `the method ${req.method} does not exist` } };
      }
    } catch (e) {
      return { error: (e as { rpc?: unknown }).rpc ?? { code: -32603, message: String(e) } };
    }
  };

  // The calls budget: full at the start, refilled at maxCallsPerSecond.
  let bucket = o.maxCallsPerSecond ?? 0;
  let filledAt = performance.now();
  const withinBudget = (calls: number) => {
    if (!o.maxCallsPerSecond) return true;
    const now = performance.now();
    bucket = Math.min(o.maxCallsPerSecond, bucket + ((now - filledAt) / 1000) * o.maxCallsPerSecond);
    filledAt = now;
    if (calls > bucket) return false;
    bucket -= calls;
    return true;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      chain.requests++;
      chain.firstRequestAt ||= performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (!withinBudget(Array.isArray(body) ? body.length : 1)) {
        chain.throttled++;
        const refuse = () =>
          res
            .writeHead(429, { 'content-type': 'application/json' })
            .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32005,"message":"rate limit exceeded"}}');
        if (o.latencyMs) setTimeout(refuse, o.latencyMs);
        else refuse();
        return;
      }
      for (const m of new Set<string>((Array.isArray(body) ? body : [body]).map((r) => r.method)))
        chain.requestsByMethod.set(m, (chain.requestsByMethod.get(m) ?? 0) + 1);
      const one = (r: { id?: unknown; method: string; params?: unknown[] }) => ({
        jsonrpc: '2.0',
        id: r.id ?? null,
        ...answer(r),
      });
      const text = JSON.stringify(Array.isArray(body) ? body.map(one) : one(body));
      const send = () => res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      if (o.latencyMs) setTimeout(send, o.latencyMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  chain.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  chain.stop = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return chain;
}

function rangeError(message: string): Error {
  return Object.assign(new Error(message), { rpc: { code: -32602, message } });
}
