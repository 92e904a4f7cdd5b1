/**
 * A small Solana JSON-RPC client over fetch. Plain fetch rather than
 * `@solana/web3.js`'s `createSolanaRpc` because the ingester needs what that
 * transport hides: a per-request timeout, the HTTP status of a failure (429 and
 * 5xx are retried with backoff, on the next fallback URL), and the JSON-RPC error
 * code (-32004 "block not available" is an answer, not an outage). Amounts in the
 * answers are strings already (`uiTokenAmount.amount`), so no u64 is ever a float.
 */
import { VaultstreamError } from '../../core/errors.ts';

export interface RpcOptions {
  /** First preferred; each retry moves on to the next one. */
  urls: string[];
  timeoutMs: number;
  /** Attempts in all, across the URLs. */
  maxAttempts: number;
  /** First retry delay; doubles on each attempt. */
  backoffMs: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Told about every failed attempt (the caller publishes it as a source error). */
  onFault?: (fault: VaultstreamError, url: string, method: string) => void;
}

export interface SolanaRpc {
  /** Calls `method`; throws a `VaultstreamError` once every attempt failed or the node answered an error. */
  call<T>(method: string, params: unknown[]): Promise<T>;
}

/** A JSON-RPC error object answered by the node: an answer, never retried. */
export function rpcError(code: number, message: string): VaultstreamError {
  return new VaultstreamError('NOT_FOUND', `solana rpc error ${code}: ${message}`, {
    details: { rpcCode: code },
    retryable: false,
  });
}

/** The short code of a fault for `source_errors` (TIMEOUT, HTTP_429, RPC_-32004, NETWORK). */
export function faultCode(err: unknown): string {
  if (!(err instanceof VaultstreamError)) return 'NETWORK';
  const d = err.details ?? {};
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

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Builds the client; see `RpcOptions`. */
export function createRpc(opts: RpcOptions): SolanaRpc {
  if (!opts.urls.length) throw new VaultstreamError('CONFIG_INVALID', 'solana.rpcUrls is empty');
  const doFetch = opts.fetch ?? fetch;
  const sleep = opts.sleep ?? defaultSleep;
  let id = 0;
  return {
    async call<T>(method: string, params: unknown[]): Promise<T> {
      let last: VaultstreamError | undefined;
      for (let attempt = 0; attempt < opts.maxAttempts; attempt++) {
        const url = opts.urls[attempt % opts.urls.length];
        if (attempt > 0) await sleep(opts.backoffMs * 2 ** (attempt - 1));
        try {
          const { body } = await fetchJson(
            doFetch,
            url,
            {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
            },
            opts.timeoutMs,
          );
          const answer = body as { result?: T; error?: { code: number; message: string } };
          if (answer?.error) throw rpcError(answer.error.code, answer.error.message);
          if (!answer || !('result' in answer))
            throw new VaultstreamError('DECODE_FAILED', `${url}: ${method} answered without result`, {
              retryable: true,
            });
          return answer.result as T;
        } catch (e) {
          if (!(e instanceof VaultstreamError) || !e.retryable) throw e;
          last = e;
          opts.onFault?.(e, url, method);
        }
      }
      throw last as VaultstreamError;
    },
  };
}
