/**
 * core/retry.ts: attempts, exponential backoff capped at maxMs, jitter, Retry-After hints,
 * the retryable predicate, the onRetry hook and the abort signal. Waits run on vi's fake
 * timers (the helper's own sleep), so each delay is observed exactly.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VaultstreamError } from '../../core/errors.ts';
import { backoffDelay, type RetryInfo, retry, sleep } from '../../core/retry.ts';
import { Rng } from '../../devnet/sim/rng.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** An operation that fails `failures` times with `error(n)`, then answers `n`. */
function flaky(failures: number, error = (n: number) => new Error(`failure ${n}`)) {
  const calls: number[] = [];
  const fn = async (attempt: number) => {
    calls.push(attempt);
    if (calls.length <= failures) throw error(calls.length);
    return calls.length;
  };
  return { fn, calls };
}

/** Runs `p` to completion, advancing the fake clock through every wait it starts. */
async function settle<T>(p: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  const out: { value?: T; error?: unknown } = {};
  const done = p.then(
    (value) => {
      out.value = value;
    },
    (error) => {
      out.error = error;
    },
  );
  await vi.runAllTimersAsync();
  await done;
  return out;
}

describe('backoffDelay', () => {
  it('doubles from baseMs and stops at maxMs', () => {
    const delays = Array.from({ length: 8 }, (_, i) => backoffDelay(i, { baseMs: 100, maxMs: 5_000 }));
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000]);
  });

  it('honours another factor', () => {
    expect([0, 1, 2].map((i) => backoffDelay(i, { baseMs: 10, maxMs: 1_000, factor: 3 }))).toEqual([
      10, 30, 90,
    ]);
  });

  it('takes at most the jitter share off, never adds to the delay', () => {
    const rng = new Rng(7);
    const random = () => rng.next();
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(3, { baseMs: 100, maxMs: 10_000, jitter: 0.5, random });
      expect(d).toBeGreaterThanOrEqual(400);
      expect(d).toBeLessThanOrEqual(800);
    }
    // Full jitter reaches down towards 0; the bounds come from the random value itself.
    expect(backoffDelay(2, { baseMs: 100, maxMs: 10_000, jitter: 1, random: () => 0.75 })).toBe(100);
    expect(backoffDelay(2, { baseMs: 100, maxMs: 10_000, jitter: 1, random: () => 0 })).toBe(400);
  });
});

describe('retry', () => {
  it('retries until the operation succeeds, waiting the backoff between attempts', async () => {
    const { fn, calls } = flaky(3);
    const seen: RetryInfo[] = [];
    const started = Date.now();
    const r = await settle(
      retry(fn, { attempts: 5, baseMs: 100, maxMs: 1_000, onRetry: (i) => seen.push(i) }),
    );
    expect(r.value).toBe(4);
    expect(calls).toEqual([1, 2, 3, 4]);
    expect(seen.map((i) => [i.attempt, i.delayMs, (i.error as Error).message])).toEqual([
      [1, 100, 'failure 1'],
      [2, 200, 'failure 2'],
      [3, 400, 'failure 3'],
    ]);
    expect(Date.now() - started).toBe(700);
  });

  it('throws the last failure as it is once the attempts are spent', async () => {
    const cause = new Error('socket hang up');
    const { fn, calls } = flaky(10, (n) => new VaultstreamError('TIMEOUT', `attempt ${n}`, { cause }));
    const seen: number[] = [];
    const r = await settle(
      retry(fn, { attempts: 3, baseMs: 10, maxMs: 100, onRetry: (i) => seen.push(i.attempt) }),
    );
    expect(calls).toEqual([1, 2, 3]);
    expect(seen).toEqual([1, 2]); // the last failure is thrown, not retried
    expect(r.error).toBeInstanceOf(VaultstreamError);
    expect((r.error as VaultstreamError).message).toBe('attempt 3');
    expect((r.error as VaultstreamError).cause).toBe(cause);
  });

  it('throws at once a failure the predicate refuses', async () => {
    const { fn, calls } = flaky(5, (n) => new VaultstreamError(n === 2 ? 'BAD_INPUT' : 'TIMEOUT', `f${n}`));
    const r = await settle(
      retry(fn, {
        attempts: 10,
        baseMs: 10,
        maxMs: 100,
        retryable: (e) => e instanceof VaultstreamError && e.retryable,
      }),
    );
    expect(calls).toEqual([1, 2]);
    expect((r.error as VaultstreamError).code).toBe('BAD_INPUT');
  });

  it('waits at least what the failure asks for, at most maxMs', async () => {
    const { fn } = flaky(2);
    const hints = [3_000, 60_000];
    const seen: number[] = [];
    await settle(
      retry(fn, {
        attempts: 3,
        baseMs: 100,
        maxMs: 10_000,
        retryAfterMs: () => hints.shift(),
        onRetry: (i) => seen.push(i.delayMs),
      }),
    );
    expect(seen).toEqual([3_000, 10_000]);
  });

  it('retries without end when attempts is Infinity, until it succeeds', async () => {
    const { fn, calls } = flaky(25);
    const r = await settle(retry(fn, { attempts: Infinity, baseMs: 1, maxMs: 50 }));
    expect(r.value).toBe(26);
    expect(calls).toHaveLength(26);
  });

  it('stops when aborted: no new attempt, the wait in progress ends at once', async () => {
    const ctl = new AbortController();
    const { fn, calls } = flaky(100);
    const p = retry(fn, {
      attempts: Infinity,
      baseMs: 1_000,
      maxMs: 1_000,
      signal: ctl.signal,
      onRetry: (i) => {
        if (i.attempt === 2) ctl.abort();
      },
    });
    const started = Date.now();
    const r = await settle(p);
    expect(calls).toEqual([1, 2]);
    expect(Date.now() - started).toBe(1_000); // only the first wait ran out
    expect(r.error).toBeInstanceOf(VaultstreamError);
    expect((r.error as VaultstreamError).details).toEqual({ aborted: true });
    expect(((r.error as VaultstreamError).cause as Error).message).toBe('failure 2');
  });

  it('ends with the abort reason when it is a project error', async () => {
    const ctl = new AbortController();
    const reason = new VaultstreamError('TIMEOUT', 'budget spent');
    ctl.abort(reason);
    const { fn, calls } = flaky(1);
    const r = await settle(retry(fn, { attempts: 3, baseMs: 1, maxMs: 1, signal: ctl.signal }));
    expect(calls).toEqual([]);
    expect(r.error).toBe(reason);
  });
});

describe('sleep', () => {
  it('resolves after the delay, or at once when the signal fires', async () => {
    const ctl = new AbortController();
    let done = false;
    const p = sleep(10_000, ctl.signal).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(done).toBe(false);
    ctl.abort();
    await p;
    expect(done).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
