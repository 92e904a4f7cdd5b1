/**
 * A small EVM JSON-RPC client over fetch, with what the ingester needs and viem's
 * transports hide: a deadline per request, JSON-RPC batches (block headers come 100
 * to a request), retries with exponential backoff moving on to the chain's fallback
 * URLs, every failed attempt reported (the ingester publishes it as a source error),
 * and faults classified once, by type, so callers switch on `fault` rather than on
 * messages: a range the provider refuses is not retried here but handed back for
 * the caller to halve.
 */
import { VaultstreamError } from '../../core/errors.ts';

/** What went wrong with an RPC request; also the `code` of its `source_errors` event. */
export type FaultKind =
  | 'TIMEOUT'
  | 'RATE_LIMITED'
  | 'HTTP_ERROR'
  | 'NETWORK'
  | 'RPC_ERROR'
  | 'RANGE_TOO_LARGE';

const RETRYABLE: ReadonlySet<FaultKind> = new Set(['TIMEOUT', 'RATE_LIMITED', 'HTTP_ERROR', 'NETWORK']);

/** A failed RPC request. */
export class RpcFault extends VaultstreamError {
  readonly fault: FaultKind;
  constructor(fault: FaultKind, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super(fault === 'TIMEOUT' ? 'TIMEOUT' : fault === 'RANGE_TOO_LARGE' ? 'BAD_INPUT' : 'INTERNAL', message, {
      details: { fault, ...details },
      cause,
      retryable: RETRYABLE.has(fault),
    });
    this.name = 'RpcFault';
    this.fault = fault;
  }
}

/** The fault kind of any error (`NETWORK` when it is not an `RpcFault`). */
export function faultOf(err: unknown): FaultKind {
  return err instanceof RpcFault ? err.fault : 'NETWORK';
}

// Providers word "your eth_getLogs asks too much" in many ways; this is the one place that reads them.
const RANGE_WORDS =
  /block range|range (is )?too (large|wide|big)|too many (results|logs|blocks)|more than \d+ (results|logs)|response size|limit exceeded|exceeds? (the )?(max|limit)|query timeout exceeded/i;

/**
 * Classifies a JSON-RPC error object answered to `method`. Only an `eth_getLogs`
 * refusal is a range error (for the caller to halve); -32005 ("limit exceeded") on
 * any other method is a rate limit, retried with backoff.
 */
export function rpcErrorFault(error: { code?: number; message?: string }, method = ''): RpcFault {
  const message = `rpc error ${error.code ?? '?'}: ${error.message ?? ''}`;
  if (method === 'eth_getLogs' && (RANGE_WORDS.test(error.message ?? '') || error.code === -32005))
    return new RpcFault('RANGE_TOO_LARGE', message, { rpcCode: error.code });
  if (
    error.code === 429 ||
    error.code === -32005 ||
    /rate limit|too many requests/i.test(error.message ?? '')
  )
    return new RpcFault('RATE_LIMITED', message, { rpcCode: error.code });
  return new RpcFault('RPC_ERROR', message, { rpcCode: error.code });
}

export interface RpcOptions {
  /** First preferred; a failed attempt moves on to the next. */
  urls: string[];
  timeoutMs: number;
  /** Attempts in all, across the URLs. */
  maxAttempts: number;
  /** First retry delay; doubles on each attempt up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Told about every failed attempt. */
  onFault?: (fault: RpcFault, url: string, method: string) => void;
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

export interface EvmRpc {
  /** One call; throws an `RpcFault` once every attempt failed or the node answered an error. */
  call<T>(method: string, params: unknown[]): Promise<T>;
  /** Several calls in one JSON-RPC batch, answers in call order; any error fails the batch. */
  batch<T>(calls: RpcCall[]): Promise<T[]>;
  /** Milliseconds spent waiting on the network (answers and failures, not backoff), for the bench. */
  readonly waitedMs: number;
}

/** An RPC client over `opts.urls`. */
export function createEvmRpc(opts: RpcOptions): EvmRpc {
  if (!opts.urls.length)
    throw new VaultstreamError('CONFIG_INVALID', 'an EVM chain needs at least one rpcUrl');
  const doFetch = opts.fetch ?? fetch;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let preferred = 0;
  let nextId = 1;
  let waitedMs = 0;

  async function post(url: string, body: unknown): Promise<unknown> {
    const started = performance.now();
    try {
      const res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      const text = await res.text();
      if (res.status === 429)
        throw new RpcFault('RATE_LIMITED', `HTTP 429 from ${url}`, {
          httpStatus: 429,
          retryAfterMs: Number(res.headers.get('retry-after')) * 1000 || undefined,
        });
      if (res.status === 413)
        throw new RpcFault('RANGE_TOO_LARGE', `HTTP 413 from ${url}`, { httpStatus: 413 });
      if (!res.ok)
        throw new RpcFault('HTTP_ERROR', `HTTP ${res.status} from ${url}`, { httpStatus: res.status });
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new RpcFault('HTTP_ERROR', `answer from ${url} is not JSON`, { httpStatus: res.status }, e);
      }
    } catch (e) {
      if (e instanceof RpcFault) throw e;
      const name = (e as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new RpcFault('TIMEOUT', `no answer from ${url} within ${opts.timeoutMs} ms`, {}, e);
      throw new RpcFault('NETWORK', `cannot reach ${url}: ${(e as Error).message}`, {}, e);
    } finally {
      waitedMs += performance.now() - started;
    }
  }

  /** Sends `body` with retries; `read` turns the parsed answer into the result or throws a fault. */
  async function send<T>(label: string, body: unknown, read: (answer: unknown) => T): Promise<T> {
    let last: RpcFault | undefined;
    for (let attempt = 0; attempt < opts.maxAttempts; attempt++) {
      const i = (preferred + attempt) % opts.urls.length;
      const url = opts.urls[i];
      try {
        const result = read(await post(url, body));
        preferred = i;
        return result;
      } catch (e) {
        const fault = e instanceof RpcFault ? e : new RpcFault('NETWORK', String(e), {}, e);
        opts.onFault?.(fault, url, label);
        if (!fault.retryable) throw fault;
        last = fault;
        if (attempt + 1 < opts.maxAttempts) {
          const backoff = Math.min(opts.maxBackoffMs, opts.backoffMs * 2 ** attempt);
          const hinted = fault.details?.retryAfterMs as number | undefined;
          await sleep(Math.min(opts.maxBackoffMs, Math.max(backoff, hinted ?? 0)));
        }
      }
    }
    throw last as RpcFault;
  }

  type Answer = { id?: number; result?: unknown; error?: { code?: number; message?: string } };
  const single = (a: unknown): Answer => {
    if (!a || typeof a !== 'object' || Array.isArray(a))
      throw new RpcFault('RPC_ERROR', 'malformed JSON-RPC answer');
    return a as Answer;
  };

  return {
    get waitedMs() {
      return waitedMs;
    },
    call<T>(method: string, params: unknown[]) {
      return send(method, { jsonrpc: '2.0', id: nextId++, method, params }, (answer) => {
        const a = single(answer);
        if (a.error) throw rpcErrorFault(a.error, method);
        return a.result as T;
      });
    },
    batch<T>(calls: RpcCall[]) {
      if (!calls.length) return Promise.resolve([]);
      const first = nextId;
      nextId += calls.length;
      const body = calls.map((c, k) => ({
        jsonrpc: '2.0',
        id: first + k,
        method: c.method,
        params: c.params,
      }));
      return send(`batch:${calls[0].method}`, body, (answer) => {
        if (!Array.isArray(answer))
          throw rpcErrorFault(single(answer).error ?? { message: 'not a batch answer' }, calls[0].method);
        const out = new Array<T>(calls.length);
        for (const item of answer) {
          const a = single(item);
          if (a.error) throw rpcErrorFault(a.error, calls[0].method);
          const k = (a.id ?? -1) - first;
          if (k < 0 || k >= calls.length)
            throw new RpcFault('RPC_ERROR', `unexpected id ${a.id} in a batch answer`);
          out[k] = a.result as T;
        }
        if (answer.length !== calls.length)
          throw new RpcFault('RPC_ERROR', 'a batch answer is missing items');
        return out;
      });
    },
  };
}
