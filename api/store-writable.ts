/**
 * A readiness condition of the store's writes (api/readiness.ts): not ready from the moment a
 * write fails for lack of disk space (the engine's NOT_ENOUGH_SPACE, or the kernel's ENOSPC
 * while the insert's spool file or a part is written) until a write succeeds again. `/readyz`'s
 * lag bound would take its whole bound to see it; every batch fails meanwhile.
 */
import type { Store } from '../store/client.ts';
import type { ReadinessCondition } from './readiness.ts';

/** Whether `err` (or its causes) is a failure for lack of disk space. */
export function noSpace(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, d = 0;
    e && d < 6;
    d++
  ) {
    if (e.code === 'ENOSPC' || e.code === 243 || e.code === '243') return true;
    if (/No space left on device|NOT_ENOUGH_SPACE|Cannot reserve .* on disk/i.test(String(e.message ?? '')))
      return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** `store` with its writes watched, and the condition that reports them. */
export function watchStoreWrites(
  store: Store,
  clock: () => number = Date.now,
): { store: Store; condition: ReadinessCondition } {
  let failing: { since: number } | undefined;
  const watch =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        const out = await write(...args);
        failing = undefined;
        return out;
      } catch (err) {
        if (noSpace(err)) failing ??= { since: clock() };
        throw err;
      }
    };
  return {
    store: {
      ...store,
      insert: watch(store.insert),
      insertTsv: watch(store.insertTsv),
      command: watch(store.command),
    },
    condition: {
      name: 'store writes',
      reasons: () =>
        failing
          ? [
              `writes fail for lack of disk space since ${new Date(failing.since).toISOString()}: free disk space`,
            ]
          : [],
    },
  };
}
