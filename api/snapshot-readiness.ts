/**
 * Readiness of the API's snapshots (GET /token-holders, api/handlers/holders.ts): the process is
 * ready only once every snapshot an endpoint serves holds the data it is ready with. A snapshot
 * built before (the one built at start, from a store the backfill had not filled yet) is served
 * as the newest complete one until another replaces it, so the first answer after ready would
 * be that old one: empty after a fresh start.
 *
 * The rule: once everything else readiness checks is ready (a report `/readyz` answered whose
 * only reasons are the snapshots': `saw`), the moment is noted and each snapshot is asked for a
 * build of the data stored by then (`SnapshotVersions.refresh`); its condition holds once a build
 * that began at or after that moment is the one served. From then on it holds for the life of
 * the process: a snapshot then follows the data as the endpoint documents it (the newest
 * complete one while the next builds).
 *
 * The snapshots live where the API runs (its own thread, or the main one) and readiness on the
 * main thread: they meet through `SnapshotLink` (the API reports a build once it is the one served,
 * with when it began, and registers how to ask for another; api/thread relays both across the
 * thread).
 */
import type { Readiness, ReadinessCondition, ReadinessReport } from './readiness.ts';

/** GET /token-holders's snapshot (api/handlers/holders.ts). */
export const TOKEN_HOLDERS_SNAPSHOT = 'token-holders';

/** A snapshot build that is now the one served: its name and when it began (its data was read after). */
export interface SnapshotBuilt {
  name: string;
  builtAtMs: number;
}

/** How the API's snapshots and readiness meet. */
export interface SnapshotLink {
  /** The API: snapshot `name` has a new current one. */
  built(s: SnapshotBuilt): void;
  /** The API: how to ask for a build of `name` from the data stored now. */
  onRefresh(name: string, refresh: () => void): void;
}

export interface SnapshotReadinessOptions {
  /** The snapshots readiness waits for (each one's name: its reasons' prefix); default the token holders'. */
  names?: string[];
  clock?: () => number;
  /** A refresh not answered by a build within this long is asked again (default 60 s). */
  retryMs?: number;
}

/** The readiness of the named snapshots: the SnapshotLink for the API, `conditions` for `/readyz`. */
export class SnapshotReadiness implements SnapshotLink {
  private readonly clock: () => number;
  private readonly newest = new Map<string, number>();
  private readonly refreshers = new Map<string, () => void>();
  private readonly asked = new Map<string, number>();
  private readySince: number | undefined;
  private readonly covered = new Set<string>();
  /** The latest report readiness gave (`saw`). */
  private last: ReadinessReport | undefined;

  constructor(private readonly opts: SnapshotReadinessOptions = {}) {
    this.clock = opts.clock ?? Date.now;
  }

  private get names(): string[] {
    return this.opts.names ?? [TOKEN_HOLDERS_SNAPSHOT];
  }

  /** Notes a report of the readiness these conditions are part of (every answer of its `check`), and returns it. */
  saw(report: ReadinessReport): ReadinessReport {
    this.last = report;
    return report;
  }

  /** `readiness` whose every answer these conditions see (the check `/readyz` and the endpoints ask). */
  watching(readiness: Pick<Readiness, 'check'>): Pick<Readiness, 'check'> {
    return { check: async () => this.saw(await readiness.check()) };
  }

  /** True when the latest report has no reason but the snapshots': the data they are built from is complete. */
  private dataReady(): boolean {
    const own = this.names.map((n) => `${n}: `);
    return this.last?.reasons.every((r) => own.some((p) => r.startsWith(p))) ?? false;
  }

  built(s: SnapshotBuilt): void {
    this.newest.set(s.name, Math.max(this.newest.get(s.name) ?? Number.NEGATIVE_INFINITY, s.builtAtMs));
  }

  onRefresh(name: string, refresh: () => void): void {
    this.refreshers.set(name, refresh);
  }

  /** One condition per snapshot, named after it. */
  get conditions(): ReadinessCondition[] {
    return this.names.map((name) => ({ name, reasons: () => this.reasons(name) }));
  }

  private reasons(name: string): string[] {
    if (this.covered.has(name)) return [];
    if (!this.dataReady()) return ['not built yet: waits for the rest of readiness'];
    const now = this.clock();
    this.readySince ??= now;
    if ((this.newest.get(name) ?? Number.NEGATIVE_INFINITY) >= this.readySince) {
      this.covered.add(name);
      return [];
    }
    const refresh = this.refreshers.get(name);
    if (!refresh) return ['not built yet: the API has not started'];
    const asked = this.asked.get(name);
    if (asked === undefined || now - asked >= (this.opts.retryMs ?? 60_000)) {
      this.asked.set(name, now);
      refresh();
    }
    return [`being built from the data stored at ${new Date(this.readySince).toISOString()}`];
  }
}
