/**
 * `/readyz`: ready only when the migrations ran, every followed EVM chain is live
 * (none starting, backfilling, failing or stopped) and every chain's STORED
 * watermark (`chain_watermarks`, the source `/status` reads) is within
 * `api.readiness.maxLagSeconds` of the chain's head, and, after a backfill of this
 * process, once the metrics tables have settled it. Otherwise the report lists why,
 * per chain.
 *
 * Lag: with the ingester in this process, how long ago the ingester had published the
 * blocks the store still lacks (the ingester's published block is sampled at every
 * check; a quiet chain with no new blocks is not "behind"). Without it (the API-only
 * role), wall-clock time minus the stored watermark's block time.
 *
 * The store is read at most once per `minIntervalMs` (single flight), so probes never
 * flood the one-query-at-a-time engine. No reason shows a path of this machine.
 */
import { errorMessage } from '../core/errors.ts';
import type { Store } from '../store/client.ts';
import { listMigrations } from '../views/migrate.ts';
import { withoutAnyPath } from './paths-hidden.ts';

/** What the readiness check needs of an EVM chain's progress (`EvmIngest.progress()`). */
export interface ChainPhase {
  chainId: number;
  name?: string;
  phase: string;
  head: number;
  next: number;
  stoppedReason?: string;
  lastError?: string;
}

export interface ChainReadiness {
  chainId: number;
  ready: boolean;
  phase?: string;
  /** Newest stored block and its time (null when the store has none). */
  storedBlock: number | null;
  storedBlockTime: string | null;
  lagSeconds: number | null;
  reasons: string[];
}

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  migrations: { ok: boolean; missing: string[] };
  maxLagSeconds: number;
  chains: ChainReadiness[];
  /** Every reason, prefixed with its chain. */
  reasons: string[];
  checkedAt: string;
}

/**
 * One more thing the process must have before it is ready (a snapshot built, a follower's first
 * read stored, the store writable): its reasons while it is not, none once it is. Each condition
 * lives beside what it watches; the report lists its reasons prefixed with its name.
 */
export interface ReadinessCondition {
  name: string;
  reasons(): string[] | Promise<string[]>;
}

export interface ReadinessOptions {
  store: Store;
  /** Further conditions (see ReadinessCondition), checked at every recompute. */
  conditions?: ReadinessCondition[];
  maxLagSeconds: number;
  /** Chain ids that must have a stored watermark; without `progress` and none given: every stored chain. */
  chainIds: () => number[];
  /** The EVM ingester's progress when it runs in this process. */
  progress?: () => ChainPhase[];
  /** False until this process applied the migrations (when it applies them). */
  migrated?: () => boolean;
  /**
   * False while the metrics tables lag a backfill of this process (views/settle.ts
   * `Settler.caughtUp`): the settles are held while it runs, and until the first one after it the
   * vault endpoints would answer from a history without the backfilled days.
   */
  settled?: () => boolean;
  clock?: () => number;
  /** Store reads at most this often (default 1000 ms). */
  minIntervalMs?: number;
}

interface StoredMark {
  block: number;
  time: number;
  timeText: string;
}

export class Readiness {
  private readonly clock: () => number;
  private last?: { at: number; report: ReadinessReport };
  private running?: Promise<ReadinessReport>;
  /** Per chain: (published block, when first seen) samples not yet in the store. */
  private readonly published = new Map<number, { block: number; at: number }[]>();

  constructor(private readonly opts: ReadinessOptions) {
    this.clock = opts.clock ?? Date.now;
  }

  /** The current report: recomputed at most once per `minIntervalMs`, concurrent callers share one. */
  check(): Promise<ReadinessReport> {
    const now = this.clock();
    if (this.last && now - this.last.at < (this.opts.minIntervalMs ?? 1000))
      return Promise.resolve(this.last.report);
    this.running ??= this.compute(now)
      .then((report) => {
        this.last = { at: now, report };
        return report;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async compute(now: number): Promise<ReadinessReport> {
    const { store } = this.opts;
    const db = store.database;
    const reasons: string[] = [];
    let missing: string[] = [];
    let marks = new Map<number, StoredMark>();
    try {
      const applied = new Set(
        (await store.query<{ name: string }>(`SELECT name FROM ${db}.schema_migrations FINAL`)).map(
          (r) => r.name,
        ),
      );
      missing = listMigrations()
        .map((m) => m.name)
        .filter((n) => !applied.has(n));
      if (missing.length === 0)
        marks = new Map(
          (
            await store.query<{ chain_id: number; block_number: string; t: string; s: string }>(
              `SELECT chain_id, toString(block_number) AS block_number, toString(toUnixTimestamp(block_time)) AS t,
                 toString(block_time) AS s FROM ${db}.chain_watermarks`,
            )
          ).map((r) => [
            Number(r.chain_id),
            {
              block: Number(r.block_number),
              time: Number(r.t) * 1000,
              timeText: `${r.s.replace(' ', 'T')}Z`,
            },
          ]),
        );
    } catch (err) {
      missing = missing.length ? missing : ['(schema_migrations unreadable)'];
      reasons.push(`store: ${errorMessage(err).slice(0, 200)}`);
    }
    if (this.opts.migrated && !this.opts.migrated())
      reasons.push('migrations: not applied yet by this process');
    if (missing.length) reasons.push(`migrations: not applied: ${missing.join(', ')}`);
    if (this.opts.settled && !this.opts.settled())
      reasons.push('metrics: the backfilled history is not settled into the metrics tables yet');
    for (const c of this.opts.conditions ?? []) {
      let why: string[];
      try {
        why = await c.reasons();
      } catch (err) {
        why = [`check failed: ${errorMessage(err).slice(0, 200)}`];
      }
      for (const w of why) reasons.push(`${c.name}: ${w}`);
    }

    const progress = this.opts.progress?.();
    const ids = new Set([...this.opts.chainIds(), ...(progress ?? []).map((p) => p.chainId)]);
    if (!progress && ids.size === 0) for (const id of marks.keys()) ids.add(id); // every stored chain
    const chains: ChainReadiness[] = [];
    for (const chainId of [...ids].sort((a, b) => a - b)) {
      const p = progress?.find((c) => c.chainId === chainId);
      const mark = marks.get(chainId);
      const why: string[] = [];
      if (p && p.phase !== 'live') {
        if (p.phase === 'stopped')
          why.push(`stopped: ${p.stoppedReason || p.lastError || 'no reason given'}`);
        else if (p.phase === 'failing') why.push(`failing: ${p.lastError || 'RPC errors'}`);
        else
          why.push(
            `ingester is ${p.phase}${p.phase === 'backfill' ? ` (next ${p.next}, head ${p.head})` : ''}`,
          );
      }
      let lag: number | null = null;
      if (!mark) why.push('no stored watermark');
      else
        lag = p
          ? this.publishedLag(chainId, p, mark, now)
          : Math.max(0, Math.round((now - mark.time) / 1000));
      if (lag !== null && lag > this.opts.maxLagSeconds)
        why.push(`stored watermark ${lag} s behind the head (max ${this.opts.maxLagSeconds} s)`);
      chains.push({
        chainId,
        ready: why.length === 0,
        phase: p?.phase,
        storedBlock: mark?.block ?? null,
        storedBlockTime: mark?.timeText ?? null,
        lagSeconds: lag,
        reasons: why,
      });
      for (const w of why) reasons.push(`chain ${chainId}: ${w}`);
    }
    // Reasons are shown to any client: an error's text names the data directory's files.
    for (const c of chains) c.reasons = c.reasons.map(withoutAnyPath);
    return {
      status: reasons.length === 0 ? 'ready' : 'not_ready',
      migrations: { ok: missing.length === 0 && (this.opts.migrated?.() ?? true), missing },
      maxLagSeconds: this.opts.maxLagSeconds,
      chains,
      reasons: reasons.map(withoutAnyPath),
      checkedAt: new Date(now).toISOString(),
    };
  }

  /** Seconds since the ingester first had published a block the store still lacks (0 when none). */
  private publishedLag(chainId: number, p: ChainPhase, mark: StoredMark, now: number): number {
    const samples = this.published.get(chainId) ?? [];
    const publishedBlock = p.next - 1;
    // A reorg or a restart can move the published position back: forget samples past it.
    while (samples.length && (samples.at(-1)?.block ?? -1) > publishedBlock) samples.pop();
    if (publishedBlock > (samples.at(-1)?.block ?? -1)) samples.push({ block: publishedBlock, at: now });
    while (samples.length && samples[0].block <= mark.block) samples.shift();
    if (samples.length > 120) samples.splice(1, 1); // bounded; the oldest sample (the lag) is kept
    this.published.set(chainId, samples);
    return samples.length ? Math.max(0, Math.round((now - samples[0].at) / 1000)) : 0;
  }
}
