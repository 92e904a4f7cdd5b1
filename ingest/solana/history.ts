/**
 * The opening's history: the balances of a mint's holders on the days before the follower first
 * ran, from the balances read at the opening slot S and the mint's past transactions (each
 * states every touched account's amount before and after it). The published opening is then
 * what it would have been had the follower run from the first of those transactions: every
 * account's amount before it (the amount at S where no past transaction touched the account,
 * else the amount its oldest past transaction started from) as a mint at that first
 * transaction, then each past transaction's own transfers at its slot and block time, so the
 * holder history of chain 101 has its past days. Where a past transaction's amounts do not join
 * (something not listing the mint moved the account in between: a plain SPL `Transfer`), the
 * difference is a correction just before the later transaction, as when following
 * (ingest/solana/changes.ts); the last amounts are checked against the read at S the same way.
 *
 * Everything is derived from the read's state and the saved transactions alone, so a restart
 * that publishes the opening again publishes the same events.
 */
import type { TransferRecord } from '../../schemas/records.ts';
import { type MintTx, openingTransfer } from './balances.ts';
import { applySlot, bySlot, correctTo, spans } from './changes.ts';
import { MintState } from './state.ts';

/** Records per published chunk. */
const CHUNK = 5000;

/**
 * The opening's records in chunks: `state` the read at `at.slot` (block time `at.time`),
 * `history` the mint's past transactions up to that slot, oldest first.
 */
export function* openingRecords(
  state: MintState,
  history: MintTx[],
  at: { mint: string; vault: string; slot: number; time: number },
): Generator<TransferRecord[]> {
  const groups = bySlot(history.filter((t) => !t.failed));
  const site = { mint: at.mint, vault: at.vault };
  // Each touched account's amount before the oldest slot that touched it.
  const before = new Map<string, { owner: string; amount: bigint | undefined }>();
  for (const g of groups)
    for (const [pubkey, s] of spans(g, (p) => state.get(p)?.amount))
      if (!before.has(pubkey)) before.set(pubkey, { owner: s.startOwner, amount: s.start });
  const first = groups[0]?.[0];
  const start = first
    ? { ...site, slot: first.slot, time: first.blockTime }
    : { ...site, slot: at.slot, time: at.time };
  const past = new MintState(at.mint, start.slot);
  let chunk: TransferRecord[] = [];
  for (const a of state.entries()) {
    const b = before.get(a.pubkey);
    const opening = b ? { pubkey: a.pubkey, owner: b.owner, amount: b.amount ?? 0n } : a;
    if (opening.amount > 0n) chunk.push(openingTransfer(opening, start));
    if (chunk.length >= CHUNK) {
      yield chunk;
      chunk = [];
    }
  }
  // Accounts gone by S (closed) that were there before the history.
  for (const [pubkey, b] of before) {
    if (b.amount !== undefined) past.set(pubkey, b.owner, b.amount, start.slot);
    if (!state.get(pubkey) && b.amount)
      chunk.push(openingTransfer({ pubkey, owner: b.owner, amount: b.amount }, start));
  }
  for (const g of groups) {
    chunk.push(...applySlot(past, g, site));
    if (chunk.length >= CHUNK) {
      yield chunk;
      chunk = [];
    }
  }
  const atS = new Map<string, { owner: string; amount: bigint } | undefined>();
  for (const pubkey of before.keys()) {
    const want = state.get(pubkey);
    const got = past.get(pubkey);
    if (want?.amount !== got?.amount || want?.owner !== got?.owner) atS.set(pubkey, want);
  }
  chunk.push(...correctTo(past, atS, { ...at, what: `opening:${at.slot}` }));
  if (chunk.length) yield chunk;
}
