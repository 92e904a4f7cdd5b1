/**
 * The one retry helper: attempts, exponential backoff with jitter, a longest delay, an
 * abort signal, a `retryable(err)` predicate and an `onRetry` hook for logs and metrics.
 * `retry` runs an async operation until it succeeds, fails for good or is aborted;
 * `backoffDelay` is the same delay rule for loops that cannot be one awaited call (a
 * consumer that pauses a partition and resumes it from a timer).
 */
import { VaultstreamError } from './errors.ts';

export interface BackoffOptions {
  /** Delay before the first retry. */
  baseMs: number;
  /** Longest delay (before jitter). */
  maxMs: number;
  /** Growth per retry (2: doubling). */
  factor?: number;
  /**
   * Share of each delay taken off at random, 0..1: 0 waits exactly the backoff, 1 is "full
   * jitter" (anywhere between 0 and the backoff). Spreads the retries of many callers.
   */
  jitter?: number;
  /** Random source in [0, 1) (tests: a seeded one). */
  random?: () => number;
}

export interface RetryInfo {
  error: unknown;
  /** The attempt that failed, from 1. */
  attempt: number;
  /** How long the helper waits before the next attempt. */
  delayMs: number;
}

export interface RetryOptions extends BackoffOptions {
  /** Attempts in all (1 = no retry); `Infinity` retries until aborted or a failure is not retryable. */
  attempts: number;
  /** Whether a failure may be retried; a failure it refuses is thrown at once. Default: every failure. */
  retryable?: (err: unknown, attempt: number) => boolean;
  /** A wait the failure itself asks for (e.g. HTTP Retry-After): the delay is at least this (at most `maxMs`). */
  retryAfterMs?: (err: unknown) => number | undefined;
  /** Told before each retry's wait (not about the last failure, which is thrown). */
  onRetry?: (info: RetryInfo) => void;
  /** Stops the retries: no attempt starts once it fired, and a wait in progress ends at once. */
  signal?: AbortSignal;
  /** The wait (tests: a fake one); must end early when `signal` fires. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The wait before retry number `retry` (0 = the first retry), jittered. */
export function backoffDelay(retry: number, opts: BackoffOptions): number {
  const factor = opts.factor ?? 2;
  const full = Math.min(opts.maxMs, opts.baseMs * factor ** Math.max(0, retry));
  const jitter = Math.min(1, Math.max(0, opts.jitter ?? 0));
  if (jitter === 0) return full;
  return Math.round(full * (1 - jitter * (opts.random ?? Math.random)()));
}

/** Waits `ms`, or less if `signal` fires first (it then resolves: the caller checks the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted || ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The error an aborted retry ends with: the signal's reason when it is a project error, else `INTERNAL` with the last failure as cause. */
function aborted(signal: AbortSignal, last: unknown): unknown {
  if (signal.reason instanceof VaultstreamError) return signal.reason;
  return new VaultstreamError('INTERNAL', 'the operation was aborted before it succeeded', {
    cause: last ?? signal.reason,
    retryable: false,
    details: { aborted: true },
  });
}

/**
 * Runs `fn` (given the attempt number, from 1) until it resolves. A failure is retried after
 * `backoffDelay` while attempts remain and `retryable` allows it; otherwise it is thrown as
 * it is (the caller's error, cause chain intact).
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const wait = opts.sleep ?? sleep;
  let last: unknown;
  for (let attempt = 1; ; attempt++) {
    if (opts.signal?.aborted) throw aborted(opts.signal, last);
    try {
      return await fn(attempt);
    } catch (err) {
      last = err;
      if (attempt >= opts.attempts || !(opts.retryable?.(err, attempt) ?? true)) throw err;
      const hinted = opts.retryAfterMs?.(err);
      const delayMs = Math.min(opts.maxMs, Math.max(backoffDelay(attempt - 1, opts), hinted ?? 0));
      opts.onRetry?.({ error: err, attempt, delayMs });
      await wait(delayMs, opts.signal);
    }
  }
}
