/**
 * A full re-read of the mint's token accounts at a slot R no older than the cursor, checked
 * against the supply at R (supply.ts): a read that does not add up changes nothing (the caller
 * keeps its state and fails the round). Otherwise the mint's transactions up to R are applied,
 * then every account the read disagrees with is corrected to it, in one group of transfers named
 * after R. Only the accounts that differ are kept while the read streams in.
 */
import { VaultstreamError } from '../../core/errors.ts';
import type { TransferRecord } from '../../schemas/records.ts';
import { readMintAccounts } from './accounts.ts';
import { correctTo } from './changes.ts';
import type { Cursor } from './journal.ts';
import { applyAll, blockTime, type MintReader, site } from './reads.ts';
import { signaturesSince } from './signatures.ts';
import { MintState } from './state.ts';
import { supplyAt, supplyMismatch } from './supply.ts';
import { readTransactions } from './transactions.ts';

export interface Reread {
  slot: number;
  cursor: Cursor;
  changed: Set<string>;
  records: TransferRecord[];
}

/** Every account in a new state, read at one slot and checked against the supply there. */
export async function readState(m: Omit<MintReader, 'state'>): Promise<{ state: MintState; slot: number }> {
  const state = new MintState(m.mint, 0);
  const r = await readMintAccounts(m.rpc, m.mint, m.program, { commitment: m.reads.commitment }, (a) =>
    state.set(a.pubkey, a.owner, a.amount, -1),
  );
  const supply = await supplyAt(m.rpc, m.mint, r.slot, m.reads);
  if (supply !== r.total) throw supplyMismatch(m.mint, r.slot, r.total, supply);
  state.stamp(r.slot);
  return { state, slot: r.slot };
}

/** Whether `e` is a read refused by the supply check. */
export function isSupplyMismatch(e: unknown): boolean {
  return e instanceof VaultstreamError && e.details?.fault === 'SUPPLY_MISMATCH';
}

/** The re-read (see the module comment); undefined when a transaction up to R is not available yet. */
export async function reread(m: MintReader, cursor: Cursor): Promise<Reread | undefined> {
  const { rpc, mint, state } = m;
  const read = new Map<string, { owner: string; amount: bigint }>();
  const seen = new Set<string>();
  const r = await readMintAccounts(
    rpc,
    mint,
    m.program,
    { commitment: m.reads.commitment, minContextSlot: cursor.slot, floor: cursor.slot },
    (a) => {
      seen.add(a.pubkey);
      const cur = state.get(a.pubkey);
      if (!cur || cur.amount !== a.amount || cur.owner !== a.owner) read.set(a.pubkey, a);
    },
  );
  const supply = await supplyAt(rpc, mint, r.slot, m.reads);
  if (supply !== r.total) throw supplyMismatch(mint, r.slot, r.total, supply);
  const sigs = (
    await signaturesSince(rpc, mint, {
      until: cursor.signature,
      commitment: m.reads.commitment,
      limit: m.reads.limit,
    })
  )
    .filter((s) => s.slot <= r.slot)
    .reverse();
  const { txs, complete } = await readTransactions(rpc, mint, sigs, m.reads);
  if (!complete) return undefined;
  // What the read says of the accounts those transactions touch: its amount, else (it agreed) the state's before them.
  const atRead = new Map<string, { owner: string; amount: bigint } | undefined>();
  for (const t of txs)
    for (const c of t.changes) {
      if (atRead.has(c.pubkey)) continue;
      const cur = state.get(c.pubkey);
      atRead.set(c.pubkey, read.get(c.pubkey) ?? (seen.has(c.pubkey) && cur ? cur : undefined));
    }
  const changed = new Set<string>();
  const records = applyAll(m, txs, changed);
  for (const [p, v] of read) if (!atRead.has(p)) atRead.set(p, v);
  for (const p of state.pubkeys()) if (!seen.has(p) && !atRead.has(p)) atRead.set(p, undefined);
  const diff = new Map(
    [...atRead].filter(([p, v]) => {
      const cur = state.get(p);
      return cur?.amount !== v?.amount || cur?.owner !== v?.owner;
    }),
  );
  for (const p of diff.keys()) changed.add(p);
  if (diff.size) {
    const at = { ...site(m), slot: r.slot, time: await blockTime(m, r.slot) };
    records.push(...correctTo(state, diff, { ...at, what: `reread:${r.slot}` }));
  }
  return {
    slot: r.slot,
    cursor: { slot: Math.max(cursor.slot, r.slot), signature: sigs.at(-1)?.signature ?? cursor.signature },
    changed,
    records,
  };
}
