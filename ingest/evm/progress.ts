/**
 * Backfill progress of one chain: blocks done/total since this process started,
 * blocks/s and events/s (moving averages), ETA, RPC wait time, reorgs and the last
 * error; served by `EvmIngest.progress()` for `/status`, and rendered for operators by
 * `cli/progress.ts` (bars on a terminal, periodic log lines otherwise).
 *
 * The phase: `starting` until the head is known, `backfill` until the chain first catches
 * up, then `live` for as long as it stays within `ingest.live` (at most `maxLagBlocks`
 * behind the head, last caught up at most `maxLagSeconds` ago): a block mined between two
 * polls is not a return to backfill, so `/readyz` (which follows the phase) does not flap.
 * Past those bounds it is `failing` when its rounds fail, else `backfill` again. `stopped`
 * is for good (until a restart).
 */
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import type { ChainConfig } from '../../core/settings/registry.ts';
import type { ChainFollower, RoundResult } from './follower.ts';
import type { EvmRpc } from './rpc.ts';

export interface ChainProgress {
  chainId: number;
  name: string;
  phase: 'starting' | 'backfill' | 'live' | 'failing' | 'stopped';
  head: number;
  /** Next block to ingest. */
  next: number;
  blocksDone: number;
  blocksTotal: number;
  blocksPerSecond: number;
  eventsPublished: number;
  etaSeconds: number | null;
  reorgs: number;
  blocksRetracted: number;
  rpcWaitMs: number;
  /**
   * Milliseconds the RPC requests waited for the chain's limits, summed over them: for a slot
   * (`maxConcurrentRequests`) and for the pace (`maxRequestsPerSecond`): where a limit binds.
   */
  rpcLimitWaitMs: { slot: number; pace: number };
  /** JSON-RPC calls sent to the chain since start, by method: what the backfill costs. */
  rpcCalls: Record<string, number>;
  /** Decoded events with no event family to publish into, by `role.event`. */
  unpublished: Record<string, number>;
  /** The last failed round's error; cleared once a round succeeds. */
  lastError: string;
  /** Why the chain stopped (`phase: 'stopped'`), else absent. */
  stoppedReason?: string;
  /** Clock ms (wall clock) when this process first had every block up to the head ingested (published). */
  firstCaughtUpAt?: number;
}

export class ProgressMeter {
  private readonly startedAt: number;
  private blocksDone = 0;
  private events = 0;
  private reorgs = 0;
  private retracted = 0;
  private rate = 0;
  private lastRoundAt: number;
  private lastError = '';
  private failing = false;
  private stoppedReason: string | undefined;
  /** When a round last ended with every block up to the head read (undefined: not yet). */
  private caughtUpAt: number | undefined;
  /** The first such time. */
  private firstCaughtUpAt: number | undefined;

  constructor(
    private readonly chain: ChainConfig,
    private readonly follower: ChainFollower,
    private readonly rpc: EvmRpc,
    private readonly clock: () => number,
    private readonly live: Config['ingest']['live'] = { maxLagBlocks: 200, maxLagSeconds: 60 },
  ) {
    this.startedAt = clock();
    this.lastRoundAt = this.startedAt;
  }

  record(r: RoundResult): void {
    const now = this.clock();
    const dt = Math.max(1, now - this.lastRoundAt) / 1000;
    this.lastRoundAt = now;
    this.failing = false;
    this.lastError = '';
    this.blocksDone += r.blocks;
    this.events += r.events;
    if (r.retracted) {
      this.reorgs++;
      this.retracted += r.retracted;
    }
    if (r.blocks) this.rate = this.rate ? 0.7 * this.rate + 0.3 * (r.blocks / dt) : r.blocks / dt;
    if (this.follower.head >= 0 && this.follower.next > this.follower.head) {
      this.caughtUpAt = now;
      this.firstCaughtUpAt ??= now;
    }
  }

  failed(err: unknown): void {
    this.failing = true;
    this.lastError = errorMessage(err).slice(0, 500);
  }

  /** The chain stopped for good (until a restart): `reason` says why and what to do. */
  stopped(reason: string): void {
    this.stoppedReason = reason;
    this.lastError = reason.slice(0, 500);
  }

  private phase(head: number, remaining: number): ChainProgress['phase'] {
    if (this.stoppedReason) return 'stopped';
    const { caughtUpAt } = this;
    const withinBounds =
      caughtUpAt !== undefined &&
      remaining <= this.live.maxLagBlocks &&
      this.clock() - caughtUpAt <= this.live.maxLagSeconds * 1000;
    if (withinBounds) return 'live';
    if (this.failing) return 'failing';
    if (head < 0) return 'starting';
    return remaining > 0 || caughtUpAt === undefined ? 'backfill' : 'live';
  }

  snapshot(): ChainProgress {
    const head = this.follower.head;
    const next = this.follower.next;
    const remaining = Math.max(0, head - next + 1);
    return {
      chainId: this.chain.chainId,
      name: this.chain.name,
      phase: this.phase(head, remaining),
      head,
      next,
      blocksDone: this.blocksDone,
      blocksTotal: Math.max(this.blocksDone, head - this.follower.resumedAt + 1),
      blocksPerSecond: this.rate,
      eventsPublished: this.events,
      etaSeconds: remaining === 0 ? 0 : this.rate > 0 ? Math.ceil(remaining / this.rate) : null,
      reorgs: this.reorgs,
      blocksRetracted: this.retracted,
      rpcWaitMs: Math.round(this.rpc.waitedMs),
      rpcLimitWaitMs: {
        slot: Math.round(this.rpc.limitWaitedMs.slotMs),
        pace: Math.round(this.rpc.limitWaitedMs.paceMs),
      },
      rpcCalls: Object.fromEntries(this.rpc.calls),
      unpublished: Object.fromEntries(this.follower.unpublished),
      lastError: this.lastError,
      ...(this.stoppedReason ? { stoppedReason: this.stoppedReason } : {}),
      ...(this.firstCaughtUpAt === undefined ? {} : { firstCaughtUpAt: this.firstCaughtUpAt }),
    };
  }
}
