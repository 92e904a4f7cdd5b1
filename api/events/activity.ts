/**
 * The activity rows new since the last look (docs/architecture.md#live-events), through the read of
 * GET /vaults/recent-transactions (api/read/activity-transactions.ts), so an activity event has
 * exactly the fields and values that endpoint answers. For the vaults whose activity landed with a
 * version, their newest `limit` rows are read; those never seen are new. The rows seen at the
 * stream's start are known, not new. Remembered per vault: the identities of the last `memory`
 * rows seen, so a row pushed out of the newest and back (a retraction of newer rows) is not news.
 */
import type { Store } from '../../store/client.ts';
import { type RecentTransaction, recentTransactions } from '../read/activity-transactions.ts';
import { loadRegistry, type RegistryVault } from '../read/registry.ts';

/** Rows read per vault and look: the endpoint's largest `limit`. */
export const ACTIVITY_LIMIT = 100;
/** Row identities remembered per vault. */
const MEMORY = 1000;

/** A new activity row and the slug of its vault. */
export interface NewActivity {
  vault: string;
  row: RecentTransaction;
}

const identity = (r: RecentTransaction) => `${r.chainId}:${r.transactionHash}:${r.logIndex}`;

export class ActivityWatch {
  private readonly seen = new Map<string, Set<string>>();
  private started: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: () => number,
  ) {}

  /** Notes every vault's newest rows as known (once; again after a failed try). */
  start(): Promise<void> {
    this.started ??= this.read(undefined).then(
      () => undefined,
      (err) => {
        this.started = undefined;
        throw err;
      },
    );
    return this.started;
  }

  /** The rows of `slugs` not seen before, oldest first; notes them as seen. */
  async fresh(slugs: readonly string[]): Promise<NewActivity[]> {
    await this.start();
    return this.read(new Set(slugs));
  }

  private async read(slugs: Set<string> | undefined): Promise<NewActivity[]> {
    const registry = await loadRegistry(this.store);
    const vaults = slugs ? registry.filter((v) => slugs.has(v.slug)) : registry;
    if (!vaults.length) return [];
    const answer = await recentTransactions(this.store, vaults, {
      limit: ACTIVITY_LIMIT,
      now: Math.floor(this.clock() / 1000),
    });
    const out: NewActivity[] = [];
    answer.forEach((a, i) => {
      const vault: RegistryVault = vaults[i];
      const known = this.seen.get(vault.slug);
      const seen = known ?? new Set<string>();
      // Newest first in the answer: the new ones go out oldest first.
      for (const row of [...a.recentTransactions].reverse()) {
        const id = identity(row);
        if (seen.has(id)) continue;
        seen.add(id);
        // At the start every row is known; a vault first seen later has every row new.
        if (slugs) out.push({ vault: vault.slug, row });
      }
      while (seen.size > MEMORY) seen.delete(seen.values().next().value as string);
      this.seen.set(vault.slug, seen);
    });
    return out;
  }
}
