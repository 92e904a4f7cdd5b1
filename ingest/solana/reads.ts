/** What the follower's steps share: the mint, its RPC and state, and the small reads and applications they all make. */
import type { TransferRecord } from '../../schemas/records.ts';
import type { MintTx } from './balances.ts';
import { applySlot, bySlot } from './changes.ts';
import { rpcCodeOf, type SolanaRpc } from './rpc.ts';
import type { MintState } from './state.ts';
import type { TransactionReads } from './transactions.ts';

export interface MintReader {
  rpc: SolanaRpc;
  mint: string;
  vault: string;
  /** The mint's token program. */
  program: string;
  state: MintState;
  clock: () => number;
  reads: TransactionReads & { limit: number };
}

/** RPC errors meaning "no block at that slot" (skipped, not available, not confirmed yet). */
export const NO_BLOCK = new Set([-32004, -32007, -32009]);

export const site = (m: MintReader) => ({ mint: m.mint, vault: m.vault });

/** The block time of `slot` (the clock's when the slot has no block). */
export async function blockTime(m: MintReader, slot: number): Promise<number> {
  try {
    const t = await m.rpc.call<number | null>('getBlockTime', [slot]);
    if (t !== null) return t;
  } catch (e) {
    if (!NO_BLOCK.has(rpcCodeOf(e) ?? 0)) throw e;
  }
  return Math.floor(m.clock() / 1000);
}

/** Applies `txs` to the state slot by slot; the accounts they set go in `changed`. */
export function applyAll(m: MintReader, txs: MintTx[], changed: Set<string>): TransferRecord[] {
  const records: TransferRecord[] = [];
  for (const g of bySlot(txs)) {
    records.push(...applySlot(m.state, g, site(m)));
    for (const t of g) for (const c of t.changes) changed.add(c.pubkey);
  }
  return records;
}
