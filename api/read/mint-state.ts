/**
 * The `mint_state` view of one Solana signature: the latest status, fields and
 * error of each observed step, with its first and last observation times.
 */
import type { Store } from '../../store/client.ts';

export interface MintStepState {
  step: string;
  status: string;
  /** The step's fields as strings (cumulative: the latest observation carries them all). */
  fields: Record<string, string>;
  error: string;
  /** First and latest observation, ms since the epoch. */
  firstSeen: number;
  lastSeen: number;
}

interface Row {
  step: string;
  status: string;
  fields: Record<string, string>;
  error: string;
  first_seen: string;
  last_seen: string;
}

/** Every observed step of the flow started by `signature` (empty when none is known). */
export async function loadMintState(store: Store, signature: string): Promise<MintStepState[]> {
  const rows = await store.query<Row>(
    `SELECT step, status, fields, error, toString(toUnixTimestamp64Milli(first_seen)) AS first_seen,
       toString(toUnixTimestamp64Milli(last_seen)) AS last_seen
     FROM ${store.database}.mint_state WHERE signature = {signature:String}`,
    { signature },
  );
  return rows.map((r) => ({
    step: r.step,
    status: r.status,
    fields: r.fields,
    error: r.error,
    firstSeen: Number(r.first_seen),
    lastSeen: Number(r.last_seen),
  }));
}
