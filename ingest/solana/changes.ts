/**
 * Applying what the chain did to the follower's state (ingest/solana/state.ts), one slot at a
 * time, and the transfers that say it downstream. A transaction states each account's amount
 * before and after it, so the state is checked at every account it touches: an account whose
 * amount before the slot is not what the state holds was changed by something the follower did
 * not see (a plain SPL `Transfer` missed while a subscription was down), and a correction from
 * the state to the chain's amount is published before the slot's own transfers. The state thus
 * ends each slot at the chain's amounts for every account the slot touched.
 *
 * The transactions of one slot may come in any order (a mint's and an account's signature lists
 * are two answers): an account's amount before the slot is the one amount its transactions
 * start from that none of them ends at, and after the slot the one they end at that none
 * starts from.
 */
import type { TransferRecord } from '../../schemas/records.ts';
import {
  type AccountChange,
  correctionId,
  type MintTx,
  sortedDeltas,
  transactionTransfers,
  transfersAt,
} from './balances.ts';
import type { MintState } from './state.ts';

const keyOf = (v: bigint | undefined) => (v === undefined ? '-' : v.toString());
const amountOfKey = (k: string) => (k === '-' ? undefined : BigInt(k));

/** An account's amount before and after a slot, and its owner before and after it. */
export interface Span {
  start: bigint | undefined;
  end: bigint | undefined;
  owner: string;
  startOwner: string;
}

/**
 * Each touched account's span over `txs` (one slot, successful ones), by the rule in the module
 * comment; `amountOf` the amount the state holds (the slot that goes round starts there).
 */
export function spans(txs: MintTx[], amountOf: (pubkey: string) => bigint | undefined): Map<string, Span> {
  const byAccount = new Map<string, AccountChange[]>();
  for (const tx of txs)
    for (const c of tx.changes) {
      const list = byAccount.get(c.pubkey);
      if (list) list.push(c);
      else byAccount.set(c.pubkey, [c]);
    }
  const out = new Map<string, Span>();
  for (const [pubkey, list] of byAccount) {
    const first = list[0];
    const last = list[list.length - 1];
    if (list.length === 1) {
      out.set(pubkey, { start: first.pre, end: first.post, owner: first.owner, startOwner: first.owner });
      continue;
    }
    const count = new Map<string, number>();
    for (const c of list) {
      count.set(keyOf(c.pre), (count.get(keyOf(c.pre)) ?? 0) + 1);
      count.set(keyOf(c.post), (count.get(keyOf(c.post)) ?? 0) - 1);
    }
    const starts = [...count].filter(([, n]) => n > 0).map(([k]) => k);
    const ends = [...count].filter(([, n]) => n < 0).map(([k]) => k);
    let start = first.pre;
    let end = last.post;
    if (starts.length === 1 && ends.length === 1) {
      start = amountOfKey(starts[0]);
      end = amountOfKey(ends[0]);
    } else if (starts.length === 0 && ends.length === 0) {
      // The slot went round to where it began: from the state's amount when a transaction starts there.
      const cur = keyOf(amountOf(pubkey));
      start = end = list.some((c) => keyOf(c.pre) === cur) ? amountOfKey(cur) : first.pre;
    }
    out.set(pubkey, { start, end, owner: last.owner, startOwner: first.owner });
  }
  return out;
}

/**
 * Applies one slot's transactions (`txs`, all at `slot`) to `state`; returns the records to
 * publish: the correction of what the state missed before the slot (if anything), then each
 * successful transaction's transfers.
 */
export function applySlot(
  state: MintState,
  txs: MintTx[],
  site: { mint: string; vault: string },
): TransferRecord[] {
  const ok = txs.filter((t) => !t.failed);
  if (!ok.length) return [];
  const slot = ok[0].slot;
  const missed = new Map<string, bigint>();
  const add = (owner: string, d: bigint) => missed.set(owner, (missed.get(owner) ?? 0n) + d);
  for (const [pubkey, s] of spans(ok, (p) => state.get(p)?.amount)) {
    const cur = state.get(pubkey);
    if (
      (cur?.amount ?? 0n) !== (s.start ?? 0n) ||
      (cur && s.start !== undefined && cur.owner !== s.startOwner)
    ) {
      if (cur) add(cur.owner, -cur.amount);
      add(s.startOwner, s.start ?? 0n);
    }
    state.set(pubkey, s.owner, s.end, slot);
  }
  const records: TransferRecord[] = [];
  const deltas = sortedDeltas(missed);
  if (deltas.length) {
    const first = ok.map((t) => t.signature).sort()[0];
    const id = correctionId(site.mint, `before:${slot}:${first}`);
    records.push(...transfersAt(deltas, { ...site, slot, time: ok[0].blockTime, id }));
  }
  for (const tx of ok) records.push(...transactionTransfers(tx, site.mint, site.vault));
  return records;
}

/** `txs` grouped by slot, oldest slot first (each slot's transactions in their given order). */
export function bySlot(txs: MintTx[]): MintTx[][] {
  const groups = new Map<number, MintTx[]>();
  for (const t of txs) {
    const g = groups.get(t.slot);
    if (g) g.push(t);
    else groups.set(t.slot, [t]);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([, g]) => g);
}

/**
 * Transfers that move `state` to the amounts `chain` gives (pubkey -> owner and amount at
 * `slot`; undefined: the account is gone), applied to `state`; `what` names the group
 * (see `correctionId`).
 */
export function correctTo(
  state: MintState,
  chain: Map<string, { owner: string; amount: bigint } | undefined>,
  at: { mint: string; vault: string; slot: number; time: number; what: string },
): TransferRecord[] {
  const net = new Map<string, bigint>();
  const add = (owner: string, d: bigint) => net.set(owner, (net.get(owner) ?? 0n) + d);
  for (const [pubkey, to] of chain) {
    const cur = state.get(pubkey);
    if (cur) add(cur.owner, -cur.amount);
    if (to) add(to.owner, to.amount);
    state.set(pubkey, to?.owner ?? cur?.owner ?? '', to?.amount, at.slot);
  }
  const deltas = sortedDeltas(net);
  if (!deltas.length) return [];
  return transfersAt(deltas, { ...at, id: correctionId(at.mint, at.what) });
}
