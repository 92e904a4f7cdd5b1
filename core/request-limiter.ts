/**
 * A per-chain limit on RPC requests (chains[].maxRequestsPerSecond, maxConcurrentRequests):
 * public endpoints refuse clients that send faster or more at once, and a paid provider bills
 * by the call. `acquire` waits for a free slot and the next start time, `release` hands the slot
 * on. Used by the EVM transport (core/evm-transport.ts) around every HTTP request (a JSON-RPC
 * batch is one request).
 */
import { sleep } from './retry.ts';

export class RequestLimiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** When the next request may start (performance.now()). */
  private nextAt = 0;

  /** `perSecond` 0 = no rate limit; `concurrent` requests in flight at most. */
  constructor(
    private readonly perSecond: number,
    private readonly concurrent: number,
  ) {}

  /** Waits for a slot and the request's start time; call `release` once the request ended. */
  async acquire(): Promise<void> {
    if (this.active < this.concurrent) this.active++;
    // The releasing request hands its slot over: `active` stays as it is.
    else await new Promise<void>((r) => this.waiting.push(r));
    if (this.perSecond > 0) {
      const now = performance.now();
      const at = Math.max(now, this.nextAt);
      this.nextAt = at + 1000 / this.perSecond;
      if (at > now) await sleep(at - now);
    }
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}
