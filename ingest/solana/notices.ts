/**
 * The accounts the subscription says changed (ingest/solana/subscription.ts) that the mint's
 * own transactions of the round did not explain: an account changed at a slot its state has not
 * reached, by a transaction that does not list the mint (a plain SPL `Transfer`, a transfer then
 * close). Each such account's newest signatures lead to those transactions, which are applied
 * like any other (their signatures are their identity); what they still leave unexplained is set
 * to the amount the notice gave.
 */
import type { TransferRecord } from '../../schemas/records.ts';
import { correctTo } from './changes.ts';
import { applyAll, blockTime, type MintReader, site } from './reads.ts';
import type { AccountNotice } from './subscription.ts';
import { readTransactions } from './transactions.ts';
import type { SignatureInfo } from './types.ts';

/** An account's own signatures read when a notice names it. */
const ACCOUNT_SIGNATURES = 20;

export interface NoticeRound {
  /** The cursor's slot before the round (a new account changed after it). */
  before: number;
  head: number;
  /** Signatures the round already applied. */
  seen: Set<string>;
  /** The accounts the round set (added to). */
  changed: Set<string>;
}

/** Applies what lies behind `notices` (see the module comment); returns the records to publish. */
export async function explainNotices(
  m: MintReader,
  notices: AccountNotice[],
  round: NoticeRound,
): Promise<TransferRecord[]> {
  const { state } = m;
  const open = (n: AccountNotice) => {
    const a = state.get(n.pubkey);
    // Explained: the state holds the notice's amount, or a change newer than the notice's slot.
    return !(a && (a.slot > n.slot || (a.amount === n.amount && a.owner === n.owner)));
  };
  const unexplained = notices.filter(open);
  if (!unexplained.length) return [];
  const lists = await m.rpc.batch<SignatureInfo[]>(
    unexplained.map((n) => ({
      method: 'getSignaturesForAddress',
      params: [n.pubkey, { commitment: m.reads.commitment, limit: ACCOUNT_SIGNATURES }],
    })),
  );
  const wanted = new Map<string, SignatureInfo>();
  unexplained.forEach((n, i) => {
    const since = state.get(n.pubkey)?.slot ?? round.before;
    for (const s of lists[i] ?? [])
      if (s.slot > since && s.slot <= round.head && !round.seen.has(s.signature)) wanted.set(s.signature, s);
  });
  const sigs = [...wanted.values()].sort((a, b) => a.slot - b.slot);
  const { txs } = await readTransactions(m.rpc, m.mint, sigs, m.reads);
  const records = applyAll(m, txs, round.changed);
  const rest = new Map(
    unexplained.filter(open).map((n) => [n.pubkey, { owner: n.owner, amount: n.amount }] as const),
  );
  if (!rest.size) return records;
  for (const p of rest.keys()) round.changed.add(p);
  const first = [...rest.keys()].sort()[0];
  const at = { ...site(m), slot: round.head, time: await blockTime(m, round.head) };
  records.push(...correctTo(state, rest, { ...at, what: `notice:${round.head}:${first}` }));
  return records;
}
