/**
 * Solana share movements as `transfers` records (chain 101): what a transaction did to the
 * mint's token accounts (`MintTx`, from its pre/post token balances), the transfers that
 * pair its owners' changes, and the synthetic transfers of a balance read (opening balances,
 * corrections). Amounts stay exact (bigint, published as decimal strings).
 */
import { createHash } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { TransferRecord } from '../../schemas/records.ts';
import type { ParsedTransaction, TokenBalance } from './types.ts';

/** The System Program address: the zero address of Solana mints and burns. */
export const SOLANA_ZERO = '11111111111111111111111111111111';

/** One token account of the mint in a transaction: its amount before and after (undefined: it did not exist). */
export interface AccountChange {
  pubkey: string;
  owner: string;
  pre?: bigint;
  post?: bigint;
}

/** What the follower keeps of a transaction: its identity, time and what it did to the mint's accounts. */
export interface MintTx {
  signature: string;
  slot: number;
  blockTime: number;
  /** A failed transaction changes no balance. */
  failed: boolean;
  changes: AccountChange[];
}

/** `tx`'s changes to `mint`'s token accounts (`fallbackTime` when the node gives no block time). */
export function mintTx(tx: ParsedTransaction, mint: string, fallbackTime: number): MintTx {
  const keys = tx.transaction.message.accountKeys;
  const byAccount = new Map<string, AccountChange>();
  const take = (list: TokenBalance[] | undefined, side: 'pre' | 'post') => {
    for (const b of list ?? []) {
      if (b.mint !== mint) continue;
      const pubkey = keys[b.accountIndex]?.pubkey;
      if (!pubkey) continue;
      // Old transactions lack `owner`; the token account itself then stands for its owner.
      const owner = b.owner ?? pubkey;
      const c = byAccount.get(pubkey) ?? { pubkey, owner };
      if (side === 'post') c.owner = owner;
      c[side] = BigInt(b.uiTokenAmount.amount);
      byAccount.set(pubkey, c);
    }
  };
  take(tx.meta?.preTokenBalances, 'pre');
  take(tx.meta?.postTokenBalances, 'post');
  return {
    signature: tx.transaction.signatures[0],
    slot: tx.slot,
    blockTime: tx.blockTime ?? fallbackTime,
    failed: !tx.meta || Boolean(tx.meta.err),
    changes: [...byAccount.values()].sort((a, b) => (a.pubkey < b.pubkey ? -1 : 1)),
  };
}

/** Net change of each owner's balance in `tx` (owners with no change left out), sorted by owner. */
export function ownerDeltas(tx: MintTx): [string, bigint][] {
  if (tx.failed) return [];
  const net = new Map<string, bigint>();
  for (const c of tx.changes) {
    const was = net.get(c.owner) ?? 0n;
    net.set(c.owner, was + (c.post ?? 0n) - (c.pre ?? 0n));
  }
  return sortedDeltas(net);
}

/** The non-zero entries of `net`, by owner. */
export function sortedDeltas(net: Map<string, bigint>): [string, bigint][] {
  return [...net].filter(([, d]) => d !== 0n).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Pairs the losers with the gainers of a transaction into transfers, in owner order;
 * what is left over is a mint (from the zero address) or a burn (to it). The sum of
 * the transfers' effects equals the deltas exactly.
 */
export function pairDeltas(deltas: [string, bigint][]): { from: string; to: string; amount: bigint }[] {
  const senders = deltas.filter(([, d]) => d < 0n).map(([o, d]) => ({ owner: o, left: -d }));
  const receivers = deltas.filter(([, d]) => d > 0n).map(([o, d]) => ({ owner: o, left: d }));
  const out: { from: string; to: string; amount: bigint }[] = [];
  let s = 0;
  let r = 0;
  while (s < senders.length && r < receivers.length) {
    // biome-ignore lint/complexity/useMathMinMax: bigints; Math.min takes numbers
    const amount = senders[s].left < receivers[r].left ? senders[s].left : receivers[r].left;
    out.push({ from: senders[s].owner, to: receivers[r].owner, amount });
    senders[s].left -= amount;
    receivers[r].left -= amount;
    if (senders[s].left === 0n) s++;
    if (receivers[r].left === 0n) r++;
  }
  for (; r < receivers.length; r++)
    out.push({ from: SOLANA_ZERO, to: receivers[r].owner, amount: receivers[r].left });
  for (; s < senders.length; s++)
    out.push({ from: senders[s].owner, to: SOLANA_ZERO, amount: senders[s].left });
  return out;
}

/** Where a group of transfers happened and what names it. */
export interface TransferSite {
  mint: string;
  vault: string;
  slot: number;
  time: number;
  /** Stands for the block hash and the transaction hash (see `transactionTransfers`). */
  id: string;
}

/** `deltas` paired into transfers at `site` (logIndex = the transfer's index). */
export function transfersAt(deltas: [string, bigint][], site: TransferSite): TransferRecord[] {
  return pairDeltas(deltas).map((t, i) => ({
    chainId: SOLANA_CHAIN_ID,
    blockNumber: site.slot,
    blockHash: site.id,
    blockTimestamp: site.time,
    txHash: site.id,
    logIndex: i,
    removed: false,
    vault: site.vault,
    token: site.mint,
    from: t.from,
    to: t.to,
    amount: t.amount.toString(),
  }));
}

/**
 * The transfers of one successful transaction. Identity: the signature stands for
 * the block hash (getTransaction does not give the block's hash, and the signature
 * keeps `chainId:blockHash:logIndex` unique per balance change), logIndex = the
 * change's index within the transaction.
 */
export function transactionTransfers(tx: MintTx, mint: string, vault: string): TransferRecord[] {
  return transfersAt(ownerDeltas(tx), { mint, vault, slot: tx.slot, time: tx.blockTime, id: tx.signature });
}

/**
 * An opening balance at `slot` as a mint from the zero address, one per token account (the
 * account address is its identity, so publishing the same read again is a no-op).
 */
export function openingTransfer(
  a: { pubkey: string; owner: string; amount: bigint },
  at: { mint: string; vault: string; slot: number; time: number },
): TransferRecord {
  return {
    chainId: SOLANA_CHAIN_ID,
    blockNumber: at.slot,
    blockHash: a.pubkey,
    blockTimestamp: at.time,
    txHash: a.pubkey,
    logIndex: 0,
    removed: false,
    vault: at.vault,
    token: at.mint,
    from: SOLANA_ZERO,
    to: a.owner,
    amount: a.amount.toString(),
  };
}

/**
 * The synthetic transaction id of a group of corrections: base58 of sha512(mint, what), 64
 * bytes like a signature, so the same group published again names the same events and the
 * consumers drop them, while two groups at one slot (`what` differs) never share an id.
 */
export function correctionId(mint: string, what: string): string {
  const digest = createHash('sha512').update(`vaultstream:solana-reconcile:${mint}:${what}`).digest();
  return getBase58Decoder().decode(digest);
}
