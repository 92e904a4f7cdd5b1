/**
 * A follower's checkpoint from before the journal (one JSON file holding the cursor and what had
 * been published per owner: `ledger`) taken over without a wrong number: what it still had to
 * publish (an opening not all out, pending corrections) is published again under its own ids,
 * every account is read at a slot R (checked against the supply), the mint's transactions from the
 * old cursor up to R are published as their own transfers, and one group of corrections moves
 * what was published per owner to the read. The journal then starts at R. A crash before that
 * leaves the old checkpoint in place and the same steps run again (the republished events and the
 * transactions have fixed ids; the corrections are only published from the journal).
 */
import { VaultstreamError } from '../../core/errors.ts';
import type { TransferRecord } from '../../schemas/records.ts';
import {
  correctionId,
  ownerDeltas,
  SOLANA_ZERO,
  sortedDeltas,
  transactionTransfers,
  transfersAt,
} from './balances.ts';
import type { Cursor, Journal } from './journal.ts';
import type { Publish } from './publish.ts';
import { blockTime, type MintReader, site } from './reads.ts';
import { readState } from './reread.ts';
import { signaturesSince } from './signatures.ts';
import type { MintState } from './state.ts';
import { readTransactions } from './transactions.ts';

/** The old checkpoint's shape. */
export interface LegacyCheckpoint {
  mint: string;
  phase: 'opening' | 'following';
  slot: number;
  signature?: string;
  opening?: TransferRecord[];
  ledger?: Record<string, string>;
  corrections?: TransferRecord[];
}

export function isLegacy(v: unknown): v is LegacyCheckpoint {
  return typeof v === 'object' && v !== null && 'phase' in v && !('generation' in v);
}

/** Takes `old` over (see the module comment); the state and cursor the journal now starts from. */
export async function takeOver(
  m: Omit<MintReader, 'state'>,
  old: LegacyCheckpoint,
  publish: Publish,
  journal: Journal,
): Promise<{ state: MintState; cursor: Cursor; time: number }> {
  const published = new Map<string, bigint>();
  const add = (records: TransferRecord[]) => {
    for (const r of records) {
      if (r.from !== SOLANA_ZERO) published.set(r.from, (published.get(r.from) ?? 0n) - BigInt(r.amount));
      if (r.to !== SOLANA_ZERO) published.set(r.to, (published.get(r.to) ?? 0n) + BigInt(r.amount));
    }
  };
  if (old.phase === 'opening') {
    await publish('transfers', old.opening ?? []);
    add(old.opening ?? []);
  } else if (old.ledger) {
    for (const [o, v] of Object.entries(old.ledger)) published.set(o, BigInt(v));
    // Pending corrections are in the old ledger already: only published again.
    await publish('transfers', old.corrections ?? []);
  } else
    throw new VaultstreamError(
      'CONFIG_INVALID',
      `the Solana checkpoint of ${old.mint} keeps no ledger of what it published (it predates reconciliation): delete it and chain 101's rows of this vault to read the mint again`,
    );
  const { state, slot } = await readState(m);
  const sigs = (
    await signaturesSince(m.rpc, m.mint, {
      until: old.signature,
      commitment: m.reads.commitment,
      limit: m.reads.limit,
      stop: old.signature ? undefined : (s) => s.slot <= old.slot,
    })
  )
    .filter((s) => s.slot <= slot)
    .reverse();
  const { txs, complete } = await readTransactions(m.rpc, m.mint, sigs, m.reads);
  if (!complete)
    throw new VaultstreamError('RPC_UNAVAILABLE', 'solana: a transaction is not available yet', {
      retryable: true,
    });
  for (const t of txs) {
    await publish('transfers', transactionTransfers(t, m.mint, m.vault));
    for (const [o, d] of ownerDeltas(t)) published.set(o, (published.get(o) ?? 0n) + d);
  }
  const diff = new Map<string, bigint>();
  for (const [o, v] of published) diff.set(o, -v);
  for (const a of state.entries()) diff.set(a.owner, (diff.get(a.owner) ?? 0n) + a.amount);
  const time = await blockTime({ ...m, state }, slot);
  const records = transfersAt(sortedDeltas(diff), {
    ...site({ ...m, state }),
    slot,
    time,
    id: correctionId(m.mint, `legacy:${slot}`),
  });
  const cursor = { slot, signature: sigs.at(-1)?.signature ?? old.signature };
  await journal.begin(state, { phase: 'following', base: cursor, openingSlot: slot, openingTime: time });
  await journal.append({ cursor, set: [], records });
  await publish('transfers', records);
  return { state, cursor, time };
}
