/**
 * Exactly-once effect for tables whose incremental views sum signed deltas.
 * A row is kept only when it changes its event's state: a new event, a retraction of
 * a live one, or the return of a retracted one (a reorg back). Anything already in
 * that state (a replayed batch, a re-published event, a replayed file) is dropped,
 * so the sums count every event once, whatever was delivered twice.
 */
import type { Store } from '../store/client.ts';
import type { Row } from './rows.ts';

const LOOKUP_CHUNK = 20_000;
const SAFE_ID = /^[0-9A-Za-z:]+$/;

/** Current state of each event id: true = live, false = retracted; absent = never seen. */
export async function currentStates(
  store: Store,
  table: string,
  ids: string[],
): Promise<Map<string, boolean>> {
  const states = new Map<string, boolean>();
  for (let i = 0; i < ids.length; i += LOOKUP_CHUNK) {
    const chunk = ids.slice(i, i + LOOKUP_CHUNK).filter((id) => SAFE_ID.test(id));
    if (chunk.length === 0) continue;
    // Ids are validated (digits, hex, base58, ':'), so inlining them in the body is safe and
    // keeps a 20k-element list out of the URL.
    const list = chunk.map((id) => `'${id}'`).join(',');
    const rows = await store.query<{ event_id: string; removed: number }>(
      `SELECT event_id, argMax(removed, ver) AS removed FROM ${store.database}.${table} ` +
        `WHERE event_id IN (${list}) GROUP BY event_id`,
    );
    for (const r of rows) states.set(r.event_id, Number(r.removed) === 0);
  }
  return states;
}

/** Keeps the rows that change state, in order, given the stored states. */
export function stateChanges(rows: Row[], stored: Map<string, boolean>): Row[] {
  const live = new Map(stored);
  const out: Row[] = [];
  for (const row of rows) {
    const id = row.event_id as string;
    const wantLive = row.removed === 0;
    const now = live.get(id);
    // A retraction of something never stored has nothing to undo.
    if (now === undefined ? !wantLive : now === wantLive) continue;
    live.set(id, wantLive);
    out.push(row);
  }
  return out;
}
