/**
 * The one JSON-RPC transport of the service: a viem transport (`createTransport`) over HTTP
 * (rpc/http-post.ts) that every EVM reader uses (the ingester, the mint-flow tracker, live
 * liquidity, build-tx), and the Solana client too (ingest/solana/rpc.ts). What it adds to viem's `http`/`fallback`:
 * - every URL of the chain: the one that answered last is tried first, a failed attempt moves
 *   on to the next;
 * - a deadline per request (and an optional signal that ends the retries, e.g. a request budget);
 * - retries through core/retry.ts (exponential backoff, jitter, HTTP Retry-After);
 * - faults classified once: rate limit (HTTP 429, -32005), range too large (HTTP 413, and on
 *   `eth_getLogs` only: -32005 or a provider's "too many results" wording; never retried here, the
 *   caller narrows the range), transient (timeouts, network, HTTP errors: retried) and permanent
 *   (any other JSON-RPC error: an answer, thrown at once);
 * - a refusal as over the provider's rate does not use up an attempt (`RATE_LIMITED_ATTEMPTS`);
 * - JSON-RPC batches (`value.batch`: the ingester's block headers), with the same retries, cut
 *   smaller when refused as too large, single calls where batches are refused
 *   (rpc/evm-batch.ts);
 * - the time spent waiting on the network (`value.waitedMs`) and for the limits below
 *   (`value.limitWaitedMs`), the calls sent by method (`value.calls`, and
 *   `vaultstream_rpc_calls_total` in /metrics) and the HTTP requests (`value.requests`: a batch is
 *   one);
 * - a per-chain limit on requests per second (fixed, or `auto`: none on a private network, else
 *   learnt from the provider's refusals) and in flight (rpc/request-limiter.ts).
 * The fault model (kinds, error types, classification, a refusal's range hint) is rpc/rpc-faults.ts.
 * Errors are viem's types (`HttpRequestError`, `TimeoutError`, `RpcRequestError`, so viem's own
 * mapping of RPC codes and revert decoding work unchanged) carrying the fault kind and the
 * project's error code (core/errors.ts), with the underlying error as `cause`.
 */
import { createTransport, type Transport } from 'viem';
import { VaultstreamError } from '../core/errors.ts';
import { rpcCalls } from '../core/metrics.ts';
import { retry } from '../core/retry.ts';
import { BatchRefused, batchSender, type RpcCall, single } from './evm-batch.ts';
import { httpPost } from './http-post.ts';
import { type RatePolicy, RequestLimiter } from './request-limiter.ts';
import { type EvmFault, EvmHttpFault, EvmTimeoutFault, evmFaultOf, rpcAnswerFault } from './rpc-faults.ts';

// The fault model lives in rpc/rpc-faults.ts; its names are this transport's too.

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
  /**
   * Attempts a request may take while refused as over the provider's rate, in units of
   * `maxAttempts` (default `RATE_LIMITED_ATTEMPTS`); 1 for a client an API request waits on.
   */
  rateLimitedAttempts?: number;
  /**
   * Requests started per second at most (0 or absent: no limit), or `auto`: none for a URL on a
   * private network, else a pace learnt from the provider's refusals (rpc/request-limiter.ts);
   * a batch is one request.
   */
  maxRequestsPerSecond?: RatePolicy;
  /** Requests in flight at most (absent: no limit). */
  maxConcurrentRequests?: number;
  /** The chain's name, labelling the calls counted in /metrics (`vaultstream_rpc_calls_total`). */
  chain?: string;
  fetch?: typeof fetch; // instead of rpc/http-post.ts (tests: one that counts or alters answers)
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The transport's extras beside `request` (`transport({}).value`). */
export interface EvmTransportValue {
  /**
   * Several calls in one JSON-RPC batch, answers in call order; members failed with a transient
   * fault are retried alone, a permanent error fails the batch (single calls where batches are refused).
   */
  batch<T>(calls: RpcCall[]): Promise<T[]>;
  /** Milliseconds spent waiting on the network (answers and failures, not backoff). */
  readonly waitedMs: number;
  /** JSON-RPC calls sent, by method (each attempt; each item of a batch), since the transport was built. */
  readonly calls: ReadonlyMap<string, number>;
  /** HTTP requests sent (each attempt; a batch is one), since the transport was built. */
  readonly requests: number;
  /**
   * One call whose answer `read` parses from the body's chunks as they arrive (no answer is held
   * as one string or one object: a Solana mint's full account read), with the same URLs, retries,
   * limits and fault model. The deadline is on progress: the attempt fails once no chunk has come
   * for `timeoutMs`, however long the whole answer takes. `read` gets the JSON-RPC envelope; it
   * may throw a fault, a retryable one (e.g. a node behind the one asked before) tries the next
   * URL; a body it cannot parse is a retryable HTTP_ERROR.
   */
  streamed<T>(method: string, params: unknown[], read: StreamedRead<T>): Promise<T>;
  /**
   * Milliseconds the requests waited for the chain's limits, summed over them: for a slot
   * (`maxConcurrentRequests`) and for the pace (`maxRequestsPerSecond`).
   */
  readonly limitWaitedMs: { readonly slotMs: number; readonly paceMs: number };
}

/** Parses a streamed answer (rpc/evm-transport.ts `value.streamed`); `url` the URL that answers. */
export type StreamedRead<T> = (chunks: AsyncIterable<Uint8Array>, url: string) => Promise<T>;

/**
 * Attempts a request may take while a provider refuses it as over its rate (HTTP 429, -32005),
 * in units of `maxAttempts`. A provider throttling a budget of calls refuses whatever goes over it
 * until its budget refills: a round reading thousands of headers at once (a backfill whose logs
 * lack `blockTimestamp`) was refused longer than five attempts' backoff lasted, failed, started
 * over, and never passed 27,300 of 2,000,000 blocks behind 1,000 calls a second
 * (`bench/sparse-backfill.ts --provider-calls-per-second`). Other faults still fail the request
 * after `maxAttempts`. The default of `rateLimitedAttempts`.
 */
const RATE_LIMITED_ATTEMPTS = 4;

export type EvmTransport = Transport<'vaultstream-evm', EvmTransportValue>;

/** The transport over `opts.urls`; see the module comment. */
export function evmTransport(opts: EvmTransportOptions): EvmTransport {
  if (!opts.urls.length)
    throw new VaultstreamError('CONFIG_INVALID', 'an EVM chain needs at least one rpcUrl');
  const doFetch = opts.fetch ?? httpPost;
  let preferred = 0;
  let nextId = 1;
  let waitedMs = 0;
  let requests = 0;
  const calls = new Map<string, number>();
  const limiter =
    opts.maxRequestsPerSecond || opts.maxConcurrentRequests
      ? new RequestLimiter(
          opts.maxRequestsPerSecond ?? 0,
          opts.maxConcurrentRequests ?? Number.POSITIVE_INFINITY,
        )
      : undefined;
  const count = (body: unknown) => {
    // Summed per method first: a batch of 100 headers is one counter update, not 100 label lookups.
    const here = new Map<string, number>();
    for (const c of (Array.isArray(body) ? body : [body]) as { method: string }[])
      here.set(c.method, (here.get(c.method) ?? 0) + 1);
    for (const [method, n] of here) {
      calls.set(method, (calls.get(method) ?? 0) + n);
      if (opts.chain) rpcCalls.inc({ chain: opts.chain, method }, n);
    }
  };

  async function post(url: string, method: string, body: unknown, read?: StreamedRead<unknown>) {
    await limiter?.acquire(url);
    try {
      count(body);
      requests++;
      return await postNow(url, method, body, read);
    } finally {
      limiter?.release();
    }
  }

  /** `read`: the answer is streamed to it, the deadline is on progress (`value.streamed`). */
  async function postNow(
    url: string,
    method: string,
    body: unknown,
    read?: StreamedRead<unknown>,
  ): Promise<unknown> {
    const started = performance.now();
    const progress = read ? progressDeadline(opts.timeoutMs) : undefined;
    const timeout = progress?.signal ?? AbortSignal.timeout(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    try {
      const res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
        ...(read ? { stream: true } : {}),
      });
      progress?.moved();
      const text = read && res.ok && res.body ? '' : await res.text();
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
        if (read && res.body) return await read(watched(res.body), url);
        return JSON.parse(text);
      } catch (e) {
        // A fault of `read`, or of the body as it came (cut off, no progress): as it is.
        if (evmFaultOf(e) === e) throw e;
        throw new EvmHttpFault({
          ...at,
          fault: 'HTTP_ERROR',
          details: `answer from ${url} is not JSON`,
          cause: e as Error,
        });
      }
    } catch (e) {
      if (evmFaultOf(e) === e) throw e;
      throw networkFault(e, `cannot reach ${url}`);
    } finally {
      progress?.end();
      waitedMs += performance.now() - started;
    }

    /** A failed connection or body: a timeout once the deadline passed, else a network fault. */
    function networkFault(e: unknown, what: string): EvmTimeoutFault | EvmHttpFault {
      if (timeout.aborted)
        return new EvmTimeoutFault({ method, url, timeoutMs: opts.timeoutMs, cause: e as Error });
      const details = `${what}: ${(e as Error).message}`;
      return new EvmHttpFault({ method, url, fault: 'NETWORK', details, cause: e as Error });
    }

    /** The body's chunks, each one moving the progress deadline; its failure a fault. */
    async function* watched(chunks: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
      try {
        for await (const c of chunks) {
          progress?.moved();
          yield c;
        }
      } catch (e) {
        throw networkFault(e, `the answer from ${url} ended early`);
      }
    }
  }

  /**
   * Sends `body()` (asked again on each attempt: a batch sends only its members still owed) with
   * retries over the URLs; `read` turns the parsed answer into the result or throws a fault.
   * `refused`: a failure that says the request's form is not taken (thrown as `BatchRefused`).
   */
  function send<T>(
    method: string,
    body: () => unknown,
    read: (answer: unknown, url: string) => T,
    refused?: (e: unknown) => boolean,
    stop?: (e: unknown) => boolean,
    streamedRead?: StreamedRead<unknown>,
  ): Promise<T> {
    const start = preferred;
    /** Attempts failed other than by a rate limit. */
    let failed = 0;
    return retry(
      async (attempt) => {
        const i = (start + attempt - 1) % opts.urls.length;
        const url = opts.urls[i];
        try {
          const result = read(await post(url, method, body(), streamedRead), url);
          preferred = i;
          return result;
        } catch (e) {
          const f = evmFaultOf(e);
          if (f) opts.onFault?.(f, url, method);
          if (f?.fault === 'RATE_LIMITED') limiter?.refused(url);
          if (refused?.(e)) throw new BatchRefused(`${url} refuses JSON-RPC batches`, { cause: e });
          throw e;
        }
      },
      {
        attempts: opts.maxAttempts * (opts.rateLimitedAttempts ?? RATE_LIMITED_ATTEMPTS),
        baseMs: opts.backoffMs,
        maxMs: opts.maxBackoffMs,
        jitter: opts.jitter ?? 0,
        signal: opts.signal,
        sleep: opts.sleep,
        retryable: (e) => {
          const f = evmFaultOf(e);
          if (e instanceof BatchRefused || stop?.(e) || !f?.retryable) return false;
          // A rate limit asks for a wait, it is no failure: only the other faults count against
          // `maxAttempts` (see RATE_LIMITED_ATTEMPTS).
          return f.fault === 'RATE_LIMITED' || ++failed < opts.maxAttempts;
        },
        retryAfterMs: (e) => evmFaultOf(e)?.retryAfterMs,
      },
    );
  }

  const request = async ({ method, params }: { method: string; params?: unknown }): Promise<any> => {
    const body = { jsonrpc: '2.0', id: nextId++, method, params: params ?? [] };
    return send(
      method,
      () => body,
      (answer, url) => {
        const a = single(answer, method, url);
        if (a.error) throw rpcAnswerFault(a.error, method, url);
        return a.result;
      },
    );
  };

  const batch = batchSender({
    send,
    request,
    ids: (n) => {
      const first = nextId;
      nextId += n;
      return first;
    },
    maxAttempts: opts.maxAttempts,
  });

  const streamed = <T>(method: string, params: unknown[], read: StreamedRead<T>): Promise<T> => {
    const body = { jsonrpc: '2.0', id: nextId++, method, params };
    return send(
      method,
      () => body,
      (answer) => answer as T,
      undefined,
      undefined,
      read as StreamedRead<unknown>,
    );
  };

  const value: EvmTransportValue = {
    streamed,
    get waitedMs() {
      return waitedMs;
    },
    calls,
    get requests() {
      return requests;
    },
    limitWaitedMs: limiter?.waited ?? { slotMs: 0, paceMs: 0 },
    batch: <T>(list: RpcCall[]): Promise<T[]> => (list.length ? batch<T>(list) : Promise.resolve([])),
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

/**
 * A deadline on progress: `signal` aborts once `ms` pass with no `moved()` (the answer's headers,
 * then each chunk of its body).
 */
function progressDeadline(ms: number) {
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const moved = () => {
    clearTimeout(timer);
    timer = setTimeout(() => ctl.abort(new DOMException(`no progress in ${ms} ms`, 'TimeoutError')), ms);
  };
  moved();
  return { signal: ctl.signal, moved, end: () => clearTimeout(timer) };
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
    maxRequestsPerSecond?: RatePolicy;
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
