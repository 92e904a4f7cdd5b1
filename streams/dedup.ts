/**
 * Exactly-once effect for tables whose incremental views sum signed deltas.
 * A row is kept only when it changes its event's state: a new event, a retraction of
 * a live one, or the return of a retracted one (a reorg back). Anything already in
 * that state (a replayed batch, a re-published event, a replayed file) is dropped,
 * so the sums count every event once, whatever was delivered twice.
 */
import type { Store } from '../store/client.ts';
import { expectRows, isFlag } from '../store/row-shape.ts';

const SAFE = /^[0-9A-Za-z:-]+$/;
/** `chainId:blockHash:logIndex` (schemas/columns.ts eventId). */
const EVENT_ID = /^\d+:[0-9A-Za-z]+:\d+$/;

/** Block range of a batch's events on one (vault, chain). */
export interface KeyRange {
  vault: string;
  chainId: number;
  from: number;
  to: number;
}

/** Collects the (vault, chain) block ranges of events as they come. */
export class KeyRangeCollector {
  // Keyed by vault, then chain: no composite key string per event.
  private readonly byVault = new Map<string, Map<number, KeyRange>>();
  readonly ranges: KeyRange[] = [];

  add(vault: string, chainId: number, block: number): void {
    let chains = this.byVault.get(vault);
    if (!chains) {
      chains = new Map();
      this.byVault.set(vault, chains);
    }
    const cur = chains.get(chainId);
    if (!cur) {
      const range = { vault, chainId, from: block, to: block };
      chains.set(chainId, range);
      this.ranges.push(range);
    } else {
      if (block < cur.from) cur.from = block;
      if (block > cur.to) cur.to = block;
    }
  }
}

/**
 * Current state of the events stored in the given block ranges: true = live, false =
 * retracted. The ranges follow the table's sorting key (vault, chain_id, block_number),
 * so the lookup reads only the granules that can hold the batch's events, however
 * large the table grows; for live data it finds next to nothing.
 */
export async function currentStates(
  store: Store,
  table: string,
  ranges: KeyRange[],
): Promise<Map<string, boolean>> {
  const states = new Map<string, boolean>();
  // Slugs are validated ([a-z0-9-]), so inlining them is safe. One block range for the whole
  // query keeps planning cheap (hundreds of OR'd ranges cost seconds to analyse); the sorting
  // key still narrows each (vault, chain) to that range.
  const safe = ranges.filter((r) => SAFE.test(r.vault));
  if (!safe.length) return states;
  const pairs = [...new Set(safe.map((r) => `('${r.vault}',${Math.trunc(r.chainId)})`))].join(',');
  const from = Math.min(...safe.map((r) => r.from));
  const to = Math.max(...safe.map((r) => r.to));
  const rows = await store.query<{ event_id: string; removed: number }>(
    `SELECT event_id, argMax(removed, ver) AS removed FROM ${store.database}.${table} ` +
      `WHERE (vault, chain_id) IN (${pairs}) AND block_number BETWEEN ${Math.trunc(from)} AND ${Math.trunc(to)} ` +
      'GROUP BY event_id',
  );
  // A state that is not an id of the chains asked about cannot be this lookup's: acting on it
  // would drop or retract real events (see store/row-shape.ts).
  const chains = new Set(safe.map((r) => String(Math.trunc(r.chainId))));
  expectRows(`stored states of ${table}`, rows, {
    event_id: (v) => typeof v === 'string' && EVENT_ID.test(v) && chains.has(v.slice(0, v.indexOf(':'))),
    removed: isFlag,
  });
  for (const r of rows) states.set(r.event_id, Number(r.removed) === 0);
  return states;
}

/**
 * The indexes of the events that change state, in order: event `i` is `ids[i]`, and
 * `live[i]` is 1 for the event, 0 for its retraction.
 */
export function stateChangeIndexes(
  ids: readonly string[],
  live: ArrayLike<number>,
  stored: ReadonlyMap<string, boolean>,
): number[] {
  // Events this batch changed; the stored map is only read.
  const changed = new Map<string, boolean>();
  const out: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const wantLive = live[i] === 1;
    const now = changed.get(id) ?? stored.get(id);
    // A retraction of something never stored has nothing to undo.
    if (now === undefined ? !wantLive : now === wantLive) continue;
    changed.set(id, wantLive);
    out.push(i);
  }
  return out;
}
