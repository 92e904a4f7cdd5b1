/**
 * Backfill progress of one chain: blocks done/total since this process started,
 * blocks/s and events/s (moving averages), ETA, RPC wait time, reorgs and the last
 * error; served by `EvmIngest.progress()` for `/status`, and rendered for operators by
 * `cli/progress.ts` (bars on a terminal, periodic log lines otherwise).
 */
import type { ChainConfig } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
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
  /** Decoded events with no event family to publish into, by `role.event`. */
  unpublished: Record<string, number>;
  /** The last failed round's error; cleared once a round succeeds. */
  lastError: string;
  /** Why the chain stopped (`phase: 'stopped'`), else absent. */
  stoppedReason?: string;
}

export class ProgressMeter {
  private readonly firstNext: number;
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

  constructor(
    private readonly chain: ChainConfig,
    private readonly follower: ChainFollower,
    private readonly rpc: EvmRpc,
    private readonly clock: () => number,
  ) {
    this.firstNext = follower.next;
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

  snapshot(): ChainProgress {
    const head = this.follower.head;
    const next = this.follower.next;
    const remaining = Math.max(0, head - next + 1);
    return {
      chainId: this.chain.chainId,
      name: this.chain.name,
      phase: this.stoppedReason
        ? 'stopped'
        : this.failing
          ? 'failing'
          : head < 0
            ? 'starting'
            : remaining > 0
              ? 'backfill'
              : 'live',
      head,
      next,
      blocksDone: this.blocksDone,
      blocksTotal: Math.max(this.blocksDone, head - this.firstNext + 1),
      blocksPerSecond: this.rate,
      eventsPublished: this.events,
      etaSeconds: remaining === 0 ? 0 : this.rate > 0 ? Math.ceil(remaining / this.rate) : null,
      reorgs: this.reorgs,
      blocksRetracted: this.retracted,
      rpcWaitMs: Math.round(this.rpc.waitedMs),
      unpublished: Object.fromEntries(this.follower.unpublished),
      lastError: this.lastError,
      ...(this.stoppedReason ? { stoppedReason: this.stoppedReason } : {}),
    };
  }
}
