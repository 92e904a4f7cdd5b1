/**
 * The Solana JSON-RPC client, over the service's one JSON-RPC transport (rpc/evm-transport.ts:
 * the same as every EVM reader's): every URL tried, the one that answered last first; a deadline
 * per request; retries through core/retry.ts with HTTP Retry-After; one fault model (TIMEOUT,
 * RATE_LIMITED for HTTP 429 / -32005 "node is behind", HTTP_ERROR, NETWORK retried; RPC_ERROR, a
 * JSON-RPC error answered such as -32004 "block not available", thrown at once); the calls counted
 * by method (`vaultstream_rpc_calls_total{chain="solana"}`). Amounts in the answers are strings
 * already (`uiTokenAmount.amount`), so no u64 is ever a float. `fetchJson` and `faultCode` also
 * serve the mint-flow HTTP services (ingest/mintflow/http-sources.ts).
 */

import { VaultstreamError } from '../../core/errors.ts';
import type { RpcCall } from '../../rpc/evm-batch.ts';
import { type EvmTransportValue, evmTransport, type StreamedRead } from '../../rpc/evm-transport.ts';
import { type EvmFault, EvmHttpFault, evmFaultOf, rpcAnswerFault } from '../../rpc/rpc-faults.ts';

export interface RpcOptions {
  /** First preferred; a failed attempt moves on to the next one. */
  urls: string[];
  timeoutMs: number;
  /** Attempts in all, across the URLs. */
  maxAttempts: number;
  /** First retry delay; doubles on each attempt up to `maxBackoffMs`. */
  backoffMs: number;
  /** Longest retry delay (default 10 s). */
  maxBackoffMs?: number;
  /** Share of each retry delay taken off at random, 0..1 (default 0). */
  jitter?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Told about every failed attempt that is retried (the caller publishes it as a source error). */
  onFault?: (fault: EvmFault, url: string, method: string) => void;
  /** Requests started per second at most (0: no limit); a batch is one request. */
  maxRequestsPerSecond?: number;
  /** Requests in flight at most. */
  maxConcurrentRequests?: number;
}

export interface SolanaRpc {
  /**
   * Calls `method`; throws a transport fault once every attempt failed or the node answered an
   * error. `check` judges the answer: what it throws (`nodeFault`) makes that URL's answer a
   * fault, and the call goes on to the next URL.
   */
  call<T>(method: string, params: unknown[], check?: (result: T, url: string) => void): Promise<T>;
  /** Several calls in one JSON-RPC batch, answers in call order (single calls where refused). */
  batch<T>(calls: RpcCall[]): Promise<T[]>;
  /** One call whose answer `read` parses as it streams in (rpc/evm-transport.ts `streamed`). */
  streamed<T>(method: string, params: unknown[], read: StreamedRead<T>): Promise<T>;
  /** HTTP requests sent so far (a batch is one). */
  readonly requests: number;
}

/**
 * An answer that is wrong for this node alone (a slot behind what another node already showed):
 * retryable, so the call moves on to the next URL.
 */
export function nodeFault(url: string, method: string, details: string): EvmFault {
  return new EvmHttpFault({ fault: 'HTTP_ERROR', method, url, details });
}

/** A JSON-RPC error answered by the node to `method` (an answer, never retried): the shared fault. */
export function rpcError(code: number, message: string, method = ''): EvmFault {
  return rpcAnswerFault({ code, message }, method);
}

/** The JSON-RPC error code a node answered (e.g. -32004), or undefined for any other failure. */
export function rpcCodeOf(err: unknown): number | undefined {
  const f = evmFaultOf(err) as (EvmFault & { code?: number }) | undefined;
  return f?.fault === 'RPC_ERROR' || f?.fault === 'RATE_LIMITED' ? f.code : undefined;
}

/** Builds the client; see the module comment. */
export function createRpc(opts: RpcOptions): SolanaRpc {
  if (!opts.urls.length) throw new VaultstreamError('CONFIG_INVALID', 'solana.rpcUrls is empty');
  const { onFault } = opts;
  const { request, value } = evmTransport({
    urls: opts.urls,
    timeoutMs: opts.timeoutMs,
    maxAttempts: opts.maxAttempts,
    backoffMs: opts.backoffMs,
    maxBackoffMs: opts.maxBackoffMs ?? 10_000,
    jitter: opts.jitter ?? 0,
    fetch: opts.fetch,
    sleep: opts.sleep,
    chain: 'solana',
    // An answered error (a skipped slot) is no fault of the source: only the retried ones are told.
    onFault: onFault && ((f, url, method) => (f.retryable ? onFault(f, url, method) : undefined)),
    maxRequestsPerSecond: opts.maxRequestsPerSecond,
    maxConcurrentRequests: opts.maxConcurrentRequests,
  })({});
  const transport = value as EvmTransportValue;
  return {
    call<T>(method: string, params: unknown[], check?: (result: T, url: string) => void) {
      if (!check) return request({ method, params } as never) as Promise<T>;
      return transport.streamed<T>(method, params, async (chunks, url) => {
        const result = envelopeResult<T>(await wholeJson(chunks), method, url);
        check(result, url);
        return result;
      });
    },
    batch: <T>(calls: RpcCall[]) => transport.batch<T>(calls),
    streamed: (method, params, read) => transport.streamed(method, params, read),
    get requests() {
      return transport.requests;
    },
  };
}

/** A whole (small) answer's JSON. */
async function wholeJson(chunks: AsyncIterable<Uint8Array>): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(Buffer.from(c));
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

/** The `result` of a JSON-RPC answer, or its `error` as the shared fault. */
export function envelopeResult<T>(answer: unknown, method: string, url: string): T {
  const a = answer as { result?: T; error?: { code: number; message: string } } | null;
  if (!a || typeof a !== 'object')
    throw rpcAnswerFault({ code: -32603, message: 'malformed JSON-RPC answer' }, method, url);
  if (a.error) throw rpcAnswerFault(a.error, method, url);
  return a.result as T;
}

/**
 * The short code of a fault for `source_errors`: an RPC transport fault's kind (TIMEOUT,
 * RATE_LIMITED, HTTP_ERROR, NETWORK, RPC_ERROR, as on EVM chains); for the HTTP services
 * HTTP_<status>, TIMEOUT or NETWORK.
 */
export function faultCode(err: unknown): string {
  const f = evmFaultOf(err);
  if (f) return f.fault;
  if (!(err instanceof VaultstreamError)) return 'NETWORK';
  const d = err.details ?? {};
  if (typeof d.fault === 'string') return d.fault;
  if (typeof d.rpcCode === 'number') return `RPC_${d.rpcCode}`;
  if (typeof d.httpStatus === 'number') return `HTTP_${d.httpStatus}`;
  return d.timedOut ? 'TIMEOUT' : 'NETWORK';
}

/** One fetch with a deadline; HTTP failures and timeouts become retryable errors. */
export async function fetchJson(
  doFetch: typeof fetch,
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await doFetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    const timedOut = (e as Error).name === 'TimeoutError' || (e as Error).name === 'AbortError';
    throw new VaultstreamError(
      'TIMEOUT',
      timedOut ? `${url}: no answer within ${timeoutMs} ms` : `${url}: ${(e as Error).message}`,
      { cause: e, retryable: true, details: { timedOut } },
    );
  }
  const text = await res.text();
  if (res.status === 429 || res.status >= 500)
    throw new VaultstreamError('TIMEOUT', `${url}: HTTP ${res.status}`, {
      details: { httpStatus: res.status, retryAfter: res.headers.get('retry-after') },
      retryable: true,
    });
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch (e) {
    throw new VaultstreamError('DECODE_FAILED', `${url}: answer is not JSON (HTTP ${res.status})`, {
      cause: e,
      retryable: true,
    });
  }
  return { status: res.status, body };
}
