/**
 * Which data each data version changed (docs/architecture.md#live-events), kept on the main thread
 * and handed to the API's event stream with the version. The consumers tell what landed
 * (streams/processor.ts `Landed`: the family and the partition keys of the batch; a vault event's
 * key is its vault's slug, a mint-flow step's the Solana signature) and the settle which vaults it
 * rewrote (views/settle.ts `SettleResult.settled`). Each is recorded with the two counters the data
 * version is made of, batches landed and settles that wrote rows, so the changes of a version are
 * exactly those recorded up to it: a batch landing after the version was taken waits for the next.
 *
 * The data version is `<run>.<landed>.<settled>`, `run` the process's start in base 36: an id of
 * the event stream (api/events/hub.ts) from another run of the process is never taken for one of
 * this run's versions.
 */
import type { FamilyName } from '../../schemas/families.ts';

/** What changed with one data version. */
export interface Changes {
  /** Slugs of the vaults whose data changed: their events landed, or their metrics settled. */
  vaults: string[];
  /** Slugs of the vaults with activity rows landed (the stream reads which rows are new). */
  activity: string[];
  /** The token holders may have changed: transfers, rates, redemptions or the registry landed. */
  tokenHolders: boolean;
  /** Solana signatures of the mint flows with steps landed. */
  mintFlows: string[];
}

/** A batch the consumers stored (streams/processor.ts `Landed`, by structure: the API does not import streams). */
export interface LandedBatch {
  family: FamilyName;
  rows: number;
  dataVersion: number;
  keys: string[];
}

/** Families whose partition key is not a vault slug. */
const NOT_VAULT_KEYED = new Set<FamilyName>(['blocks', 'mint_steps', 'dlq']);
/** Families the token holders' balances and values are computed from (views/plain/token_holder_values.sql). */
const HOLDER_INPUTS = new Set<FamilyName>(['transfers', 'rates', 'redemptions', 'registry']);
/** Most records kept between two versions taken; past it a version's changes are unknown (null). */
const MAX_PENDING = 100_000;

interface Entry {
  landed: number;
  settled: number;
  vaults: readonly string[];
  activity: boolean;
  tokenHolders: boolean;
  mintFlows: readonly string[];
}

export class ChangeLog {
  private readonly run = Date.now().toString(36);
  private landedNo = 0;
  private settledNo = 0;
  private pending: Entry[] = [];
  private overflowed = false;

  /** The data version now: this run, the batches landed and the settles that wrote rows. */
  version(): string {
    return `${this.run}.${this.landedNo}.${this.settledNo}`;
  }

  /** A batch stored (the processor's 'landed' event). */
  landed(b: LandedBatch): void {
    this.landedNo = b.dataVersion;
    if (b.rows === 0) return; // nothing stored: every record was already there
    const vaultKeyed = !NOT_VAULT_KEYED.has(b.family);
    this.record({
      vaults: vaultKeyed ? b.keys : [],
      activity: b.family === 'activity',
      tokenHolders: HOLDER_INPUTS.has(b.family),
      mintFlows: b.family === 'mint_steps' ? b.keys : [],
    });
  }

  /** A settle that wrote rows for `vaults`; `version` counts it (views/settle.ts `Settler.version`). */
  settled(version: number, vaults: Iterable<string>): void {
    this.settledNo = version;
    this.record({ vaults: [...vaults], activity: false, tokenHolders: false, mintFlows: [] });
  }

  /**
   * The changes up to `version` (one of `version()`'s) since the last version taken, and forgets
   * them; null when they are not known (a version of another run, or more changes than kept).
   */
  take(version: string): Changes | null {
    const [run, landed, settled] = version.split('.');
    const l = Number(landed);
    const s = Number(settled);
    // The entries up to a version are a prefix: each moved one counter, and both only grow.
    let n = 0;
    while (n < this.pending.length && this.pending[n].landed <= l && this.pending[n].settled <= s) n++;
    const taken = this.pending.slice(0, n);
    this.pending = this.pending.slice(n);
    const overflowed = this.overflowed;
    this.overflowed = false;
    if (run !== this.run || overflowed) return null;
    const vaults = new Set<string>();
    const activity = new Set<string>();
    const mintFlows = new Set<string>();
    let tokenHolders = false;
    for (const e of taken) {
      for (const v of e.vaults) {
        vaults.add(v);
        if (e.activity) activity.add(v);
      }
      for (const m of e.mintFlows) mintFlows.add(m);
      tokenHolders ||= e.tokenHolders;
    }
    return {
      vaults: [...vaults].sort(),
      activity: [...activity].sort(),
      tokenHolders,
      mintFlows: [...mintFlows].sort(),
    };
  }

  private record(e: Omit<Entry, 'landed' | 'settled'>): void {
    if (this.pending.length >= MAX_PENDING) {
      this.overflowed = true;
      this.pending.shift();
    }
    this.pending.push({ ...e, landed: this.landedNo, settled: this.settledNo });
  }
}

/**
 * Calls `emit` with each data version `source` gives after `from` (default: the current one),
 * looked at every `intervalMs` (a string comparison), and its changes (null without a change log,
 * as in the API-only role); returns the stop. The API's thread is told this way
 * (api/thread/host.ts), and so is the event stream of an API on the main thread (api/server.ts).
 */
export function followVersions(
  source: () => number | string,
  changes: ChangeLog | undefined,
  emit: (version: string, changes: Changes | null) => void,
  opts: { from?: string; intervalMs?: number } = {},
): () => void {
  const intervalMs = opts.intervalMs ?? 20;
  let version = opts.from ?? String(source());
  const timer = setInterval(() => {
    const v = String(source());
    if (v === version) return;
    version = v;
    emit(v, changes ? changes.take(v) : null);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
