/**
 * A small Solana JSON-RPC client over fetch. Plain fetch rather than
 * `@solana/web3.js`'s `createSolanaRpc` because the ingester needs what that
 * transport hides: a per-request timeout, the HTTP status of a failure (429 and
 * 5xx are retried with backoff, on the next fallback URL), and the JSON-RPC error
 * code (-32004 "block not available" is an answer, not an outage). Amounts in the
 * answers are strings already (`uiTokenAmount.amount`), so no u64 is ever a float.
 */
import { VaultstreamError } from '../../core/errors.ts';
import { retry } from '../../core/retry.ts';

export interface RpcOptions {
  /** First preferred; each retry moves on to the next one. */
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

/** The wait a 429/5xx answer asks for (`Retry-After` in seconds). */
function retryAfterMs(err: unknown): number | undefined {
  const header = (err as VaultstreamError).details?.retryAfter;
  return typeof header === 'string' ? Number(header) * 1000 || undefined : undefined;
}

/** Builds the client; see `RpcOptions`. Retries go through core/retry.ts. */
export function createRpc(opts: RpcOptions): SolanaRpc {
  if (!opts.urls.length) throw new VaultstreamError('CONFIG_INVALID', 'solana.rpcUrls is empty');
  const doFetch = opts.fetch ?? fetch;
  let id = 0;
  return {
    call<T>(method: string, params: unknown[]): Promise<T> {
      return retry(
        async (attempt) => {
          const url = opts.urls[(attempt - 1) % opts.urls.length];
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
            if (e instanceof VaultstreamError && e.retryable) opts.onFault?.(e, url, method);
            throw e;
          }
        },
        {
          attempts: opts.maxAttempts,
          baseMs: opts.backoffMs,
          maxMs: opts.maxBackoffMs ?? 10_000,
          jitter: opts.jitter ?? 0,
          retryable: (e) => e instanceof VaultstreamError && e.retryable,
          retryAfterMs,
          sleep: opts.sleep,
        },
      );
    },
  };
}
