/**
 * The one EVM JSON-RPC transport of the service: a viem transport (`createTransport`) over
 * fetch that every EVM reader uses (the ingester, the mint-flow tracker, live liquidity,
 * build-tx). What it adds to viem's `http`/`fallback`:
 * - every URL of the chain: the one that answered last is tried first, a failed attempt moves
 *   on to the next;
 * - a deadline per request (and an optional signal that ends the retries, e.g. a request budget);
 * - retries through core/retry.ts (exponential backoff, jitter, HTTP Retry-After);
 * - faults classified once: rate limit (HTTP 429, -32005), range too large (HTTP 413, and on
 *   `eth_getLogs` only: -32005 or a provider's "too many results" wording; never retried here, the
 *   caller narrows the range), transient (timeouts, network, HTTP errors: retried) and permanent
 *   (any other JSON-RPC error: an answer, thrown at once);
 * - JSON-RPC batches (`value.batch`: the ingester's block headers) and the time spent waiting
 *   on the network (`value.waitedMs`).
 * Errors are viem's types (`HttpRequestError`, `TimeoutError`, `RpcRequestError`, so viem's own
 * mapping of RPC codes and revert decoding work unchanged) carrying the fault kind and the
 * project's error code (core/errors.ts), with the underlying error as `cause`.
 */
import { createTransport, HttpRequestError, RpcRequestError, TimeoutError, type Transport } from 'viem';
import { type ErrorCode, VaultstreamError } from './errors.ts';
import { rpcCalls } from './metrics.ts';
import { RequestLimiter } from './request-limiter.ts';
import { retry } from './retry.ts';

/** What went wrong with an RPC request; also the `code` of the ingester's `source_errors` events. */
export type FaultKind =
  | 'TIMEOUT'
  | 'RATE_LIMITED'
  | 'HTTP_ERROR'
  | 'NETWORK'
  | 'RPC_ERROR'
  | 'RANGE_TOO_LARGE';

const ERROR_CODE: Record<FaultKind, ErrorCode> = {
  TIMEOUT: 'TIMEOUT',
  RATE_LIMITED: 'RPC_RATE_LIMITED',
  HTTP_ERROR: 'RPC_UNAVAILABLE',
  NETWORK: 'RPC_UNAVAILABLE',
  RPC_ERROR: 'RPC_ERROR',
  RANGE_TOO_LARGE: 'RPC_RANGE_TOO_LARGE',
};
const RETRYABLE: ReadonlySet<FaultKind> = new Set(['TIMEOUT', 'RATE_LIMITED', 'HTTP_ERROR', 'NETWORK']);

/** What every transport error carries besides viem's fields. */
export interface EvmFault extends Error {
  readonly fault: FaultKind;
  /** The project's error code. */
  readonly errorCode: ErrorCode;
  readonly retryable: boolean;
  /** The JSON-RPC method (`batch:<method>` for a batch). */
  readonly method: string;
  readonly url: string;
  /** The wait the server asked for (HTTP Retry-After). */
  readonly retryAfterMs?: number;
  /** viem's one-line summary and details. */
  readonly shortMessage: string;
  readonly details: string;
}

interface FaultFields {
  fault: FaultKind;
  method: string;
  url: string;
  retryAfterMs?: number;
}

function mark(e: EvmFault, f: FaultFields): void {
  Object.assign(e, {
    fault: f.fault,
    errorCode: ERROR_CODE[f.fault],
    retryable: RETRYABLE.has(f.fault),
    method: f.method,
    url: f.url,
    retryAfterMs: f.retryAfterMs,
  });
}

/** The node could not be reached or answered an HTTP error (or not JSON). */
export class EvmHttpFault extends HttpRequestError implements EvmFault {
  declare readonly fault: FaultKind;
  declare readonly errorCode: ErrorCode;
  declare readonly retryable: boolean;
  declare readonly method: string;
  declare readonly retryAfterMs?: number;
  constructor(f: FaultFields & { details: string; status?: number; cause?: Error }) {
    // The cause is attached after: given to viem's constructor, its message would replace `details`.
    super({ url: f.url, status: f.status, details: f.details });
    if (f.cause) Object.defineProperty(this, 'cause', { value: f.cause, writable: true, configurable: true });
    this.name = 'EvmHttpFault';
    mark(this, f);
  }
}

/** No answer within the per-request timeout. */
export class EvmTimeoutFault extends TimeoutError implements EvmFault {
  declare readonly fault: FaultKind;
  declare readonly errorCode: ErrorCode;
  declare readonly retryable: boolean;
  declare readonly method: string;
  constructor(f: Omit<FaultFields, 'fault'> & { timeoutMs: number; cause?: Error }) {
    super({ url: f.url, body: { method: f.method, timeoutMs: f.timeoutMs } });
    this.name = 'EvmTimeoutFault';
    if (f.cause) Object.defineProperty(this, 'cause', { value: f.cause, writable: true, configurable: true });
    mark(this, { ...f, fault: 'TIMEOUT' });
  }
}

/** A JSON-RPC error answered by the node (or an answer that breaks the protocol). */
export class EvmRpcFault extends RpcRequestError implements EvmFault {
  declare readonly fault: FaultKind;
  declare readonly errorCode: ErrorCode;
  declare readonly retryable: boolean;
  declare readonly method: string;
  constructor(f: FaultFields & { error: { code: number; message: string; data?: unknown } }) {
    super({ url: f.url, body: { method: f.method }, error: f.error });
    this.name = 'EvmRpcFault';
    mark(this, f);
  }
}

/** The transport fault in `err`'s cause chain (viem wraps RPC errors in its own types). */
export function evmFaultOf(err: unknown): EvmFault | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    if (e instanceof EvmHttpFault || e instanceof EvmTimeoutFault || e instanceof EvmRpcFault) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The fault kind of any error (`NETWORK` when no transport fault is in its cause chain). */
export function faultOf(err: unknown): FaultKind {
  return evmFaultOf(err)?.fault ?? 'NETWORK';
}

/** A transport fault's one-line text (viem's full message spans several lines). */
export function faultSummary(err: unknown): string {
  const f = evmFaultOf(err);
  if (!f) return err instanceof Error ? err.message : String(err);
  return `${f.shortMessage} ${f.details}`.trim();
}

// Providers word "your eth_getLogs asks too much" in many ways; this is the one place that reads them.
const RANGE_WORDS =
  /block range|range (is )?too (large|wide|big)|too many (results|logs|blocks)|more than \d+ (results|logs)|response size|limit exceeded|exceeds? (the )?(max|limit)|query timeout exceeded/i;

/**
 * Classifies a JSON-RPC error answered to `method`. Only an `eth_getLogs` refusal is a range
 * error (for the caller to narrow); -32005 ("limit exceeded") on any other method is a rate
 * limit, retried with backoff.
 */
export function rpcAnswerFault(
  error: { code?: number; message?: string; data?: unknown },
  method: string,
  url = '',
): EvmRpcFault {
  const code = typeof error.code === 'number' ? error.code : -32603;
  const text = error.message ?? '';
  const e = { code, message: `rpc error ${error.code ?? '?'}: ${text}`, data: error.data };
  let fault: FaultKind = 'RPC_ERROR';
  if (method === 'eth_getLogs' && (RANGE_WORDS.test(text) || code === -32005)) fault = 'RANGE_TOO_LARGE';
  else if (code === 429 || code === -32005 || /rate limit|too many requests/i.test(text))
    fault = 'RATE_LIMITED';
  return new EvmRpcFault({ fault, method, url, error: e });
}

/**
 * What a provider's `eth_getLogs` refusal says would work, read from its error (message and data):
 * - `to`: the last block of a range from the same first block that would work (Alchemy: "this
 *   block range should work: [0x.., 0x..]"; Infura's -32005 "query returned more than 10000
 *   results" carries `data: { from, to }`; others "Try with this block range [0x.., 0x..]");
 * - `span`: the widest range the provider accepts at all ("up to a 500 block range", "range
 *   1000000 exceeds limit of 10000", "max block range = 5000", "exceeds max block range 5000").
 * `countLimited` says the refusal is about the answer's size (too many logs), not the range's width:
 * its suggestion fits this stretch of the chain, not every stretch.
 */
export interface RangeHint {
  to?: number;
  span?: number;
  countLimited: boolean;
}

const SUGGESTED_PAIR = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i;
const SPAN_LIMIT =
  /(?:up to an? |limit of |max(?:imum)? block range(?: is| =|:)? ?|block range (?:limit|is) )(\d[\d,]*)(k?)/i;
const COUNT_WORDS = /results|logs in the response|response size|too many logs|cap of/i;

/** The range hint in a range refusal (see `RangeHint`), or undefined when it names none. */
export function rangeHint(err: unknown, from: number): RangeHint | undefined {
  const f = evmFaultOf(err) as (EvmFault & { data?: unknown; cause?: unknown }) | undefined;
  if (f?.fault !== 'RANGE_TOO_LARGE') return undefined;
  const text = `${f.details ?? ''} ${f.shortMessage ?? ''}`;
  const countLimited = COUNT_WORDS.test(text) && !/exceeds limit of|max(?:imum)? block range/i.test(text);
  const data = (f as { data?: { from?: unknown; to?: unknown } }).data;
  const pair = SUGGESTED_PAIR.exec(text);
  let to: number | undefined;
  if (pair && Number(pair[1]) === from) to = Number(pair[2]);
  else if (pair) to = from + Number(pair[2]) - Number(pair[1]);
  else if (data && typeof data === 'object' && data.to !== undefined && data.from !== undefined)
    to = from + Number(data.to) - Number(data.from);
  const limit = SPAN_LIMIT.exec(text);
  // Alchemy's size refusal also says "up to a 2K block range": that is no limit on a sparse stretch.
  const span =
    limit && !countLimited ? Number(limit[1].replace(/,/g, '')) * (limit[2] ? 1000 : 1) : undefined;
  if ((to === undefined || !(to >= from)) && !(span && span > 0)) return undefined;
  return {
    ...(to !== undefined && to >= from ? { to } : {}),
    ...(span ? { span } : {}),
    countLimited,
  };
}

export interface EvmTransportOptions {
  /** The chain's RPC URLs, first preferred. */
  urls: string[];
  /** Deadline of one attempt. */
  timeoutMs: number;
  /** Attempts in all per request, across the URLs. */
  maxAttempts: number;
  /** First retry delay; doubles on each retry up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Share of each retry delay taken off at random (0..1). */
  jitter?: number;
  /** Ends the retries (and the attempt in flight), e.g. an API request's budget. */
  signal?: AbortSignal;
  /** Told about every failed attempt, retried or not. */
  onFault?: (fault: EvmFault, url: string, method: string) => void;
  /** Requests started per second at most (0 or absent: no limit); a batch is one request. */
  maxRequestsPerSecond?: number;
  /** Requests in flight at most (absent: no limit). */
  maxConcurrentRequests?: number;
  /** The chain's name, labelling the calls counted in /metrics (`vaultstream_rpc_calls_total`). */
  chain?: string;
  fetch?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

/** The transport's extras beside `request` (`transport({}).value`). */
export interface EvmTransportValue {
  /** Several calls in one JSON-RPC batch, answers in call order; any error fails the batch. */
  batch<T>(calls: RpcCall[]): Promise<T[]>;
  /** Milliseconds spent waiting on the network (answers and failures, not backoff). */
  readonly waitedMs: number;
  /** JSON-RPC calls sent, by method (each attempt; each item of a batch), since the transport was built. */
  readonly calls: ReadonlyMap<string, number>;
}

export type EvmTransport = Transport<'vaultstream-evm', EvmTransportValue>;

type Answer = { id?: number; result?: unknown; error?: { code?: number; message?: string; data?: unknown } };

/** The transport over `opts.urls`; see the module comment. */
export function evmTransport(opts: EvmTransportOptions): EvmTransport {
  if (!opts.urls.length)
    throw new VaultstreamError('CONFIG_INVALID', 'an EVM chain needs at least one rpcUrl');
  const doFetch = opts.fetch ?? fetch;
  let preferred = 0;
  let nextId = 1;
  let waitedMs = 0;
  const calls = new Map<string, number>();
  const limiter =
    opts.maxRequestsPerSecond || opts.maxConcurrentRequests
      ? new RequestLimiter(
          opts.maxRequestsPerSecond ?? 0,
          opts.maxConcurrentRequests ?? Number.POSITIVE_INFINITY,
        )
      : undefined;
  const count = (body: unknown) => {
    for (const c of (Array.isArray(body) ? body : [body]) as { method: string }[]) {
      calls.set(c.method, (calls.get(c.method) ?? 0) + 1);
      if (opts.chain) rpcCalls.inc({ chain: opts.chain, method: c.method });
    }
  };

  async function post(url: string, method: string, body: unknown): Promise<unknown> {
    await limiter?.acquire();
    try {
      count(body);
      return await postNow(url, method, body);
    } finally {
      limiter?.release();
    }
  }

  async function postNow(url: string, method: string, body: unknown): Promise<unknown> {
    const started = performance.now();
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    try {
      const res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });
      const text = await res.text();
      const at = { method, url, status: res.status };
      if (res.status === 429) {
        const retryAfterMs = Number(res.headers.get('retry-after')) * 1000 || undefined;
        throw new EvmHttpFault({
          ...at,
          fault: 'RATE_LIMITED',
          retryAfterMs,
          details: `HTTP 429 from ${url}`,
        });
      }
      if (res.status === 413)
        throw new EvmHttpFault({ ...at, fault: 'RANGE_TOO_LARGE', details: `HTTP 413 from ${url}` });
      if (!res.ok)
        throw new EvmHttpFault({ ...at, fault: 'HTTP_ERROR', details: `HTTP ${res.status} from ${url}` });
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new EvmHttpFault({
          ...at,
          fault: 'HTTP_ERROR',
          details: `answer from ${url} is not JSON`,
          cause: e as Error,
        });
      }
    } catch (e) {
      if (evmFaultOf(e) === e) throw e;
      if (timeout.aborted)
        throw new EvmTimeoutFault({ method, url, timeoutMs: opts.timeoutMs, cause: e as Error });
      throw new EvmHttpFault({
        method,
        url,
        fault: 'NETWORK',
        details: `cannot reach ${url}: ${(e as Error).message}`,
        cause: e as Error,
      });
    } finally {
      waitedMs += performance.now() - started;
    }
  }

  /** Sends `body` with retries over the URLs; `read` turns the parsed answer into the result or throws a fault. */
  function send<T>(method: string, body: unknown, read: (answer: unknown, url: string) => T): Promise<T> {
    const start = preferred;
    return retry(
      async (attempt) => {
        const i = (start + attempt - 1) % opts.urls.length;
        const url = opts.urls[i];
        try {
          const result = read(await post(url, method, body), url);
          preferred = i;
          return result;
        } catch (e) {
          const f = evmFaultOf(e);
          if (f) opts.onFault?.(f, url, method);
          throw e;
        }
      },
      {
        attempts: opts.maxAttempts,
        baseMs: opts.backoffMs,
        maxMs: opts.maxBackoffMs,
        jitter: opts.jitter ?? 0,
        signal: opts.signal,
        sleep: opts.sleep,
        retryable: (e) => evmFaultOf(e)?.retryable ?? false,
        retryAfterMs: (e) => evmFaultOf(e)?.retryAfterMs,
      },
    );
  }

  const single = (a: unknown, method: string, url: string): Answer => {
    if (!a || typeof a !== 'object' || Array.isArray(a))
      throw rpcAnswerFault({ code: -32603, message: 'malformed JSON-RPC answer' }, method, url);
    return a as Answer;
  };

  const request = async ({ method, params }: { method: string; params?: unknown }): Promise<any> =>
    send(method, { jsonrpc: '2.0', id: nextId++, method, params: params ?? [] }, (answer, url) => {
      const a = single(answer, method, url);
      if (a.error) throw rpcAnswerFault(a.error, method, url);
      return a.result;
    });

  const value: EvmTransportValue = {
    get waitedMs() {
      return waitedMs;
    },
    calls,
    batch<T>(calls: RpcCall[]): Promise<T[]> {
      if (!calls.length) return Promise.resolve([]);
      const first = nextId;
      nextId += calls.length;
      const method = calls[0].method;
      const body = calls.map((c, k) => ({
        jsonrpc: '2.0',
        id: first + k,
        method: c.method,
        params: c.params,
      }));
      return send(`batch:${method}`, body, (answer, url) => {
        if (!Array.isArray(answer))
          throw rpcAnswerFault(
            single(answer, method, url).error ?? { message: 'not a batch answer' },
            method,
            url,
          );
        const out = new Array<T>(calls.length);
        for (const item of answer) {
          const a = single(item, method, url);
          if (a.error) throw rpcAnswerFault(a.error, method, url);
          const k = (a.id ?? -1) - first;
          if (k < 0 || k >= calls.length)
            throw rpcAnswerFault({ message: `unexpected id ${a.id} in a batch answer` }, method, url);
          out[k] = a.result as T;
        }
        if (answer.length !== calls.length)
          throw rpcAnswerFault({ message: 'a batch answer is missing items' }, method, url);
        return out;
      });
    },
  };

  // viem's own retries are off (retryCount 0): this transport retries, over every URL.
  return () =>
    createTransport(
      {
        key: 'vaultstream-evm',
        name: 'vaultstream EVM',
        type: 'vaultstream-evm',
        request,
        retryCount: 0,
        timeout: opts.timeoutMs,
      },
      value,
    );
}

/** The settings a chain's transport is built from (core/settings/evm.ts). */
export interface EvmRpcSettings {
  maxAttempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  jitter: number;
}

/** The transport of a configured chain (`rpcUrls`, `requestTimeoutMs`) with the `ingest` retry settings. */
export function chainTransport(
  chain: {
    name?: string;
    rpcUrls: string[];
    requestTimeoutMs: number;
    maxRequestsPerSecond?: number;
    maxConcurrentRequests?: number;
  },
  rpc: EvmRpcSettings,
  extra: Partial<EvmTransportOptions> = {},
): EvmTransport {
  return evmTransport({
    urls: chain.rpcUrls,
    timeoutMs: chain.requestTimeoutMs,
    maxAttempts: rpc.maxAttempts,
    backoffMs: rpc.backoffMs,
    maxBackoffMs: rpc.maxBackoffMs,
    jitter: rpc.jitter,
    maxRequestsPerSecond: chain.maxRequestsPerSecond,
    maxConcurrentRequests: chain.maxConcurrentRequests,
    chain: chain.name,
    ...extra,
  });
}
