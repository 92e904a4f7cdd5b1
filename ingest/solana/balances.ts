/**
 * Solana share movements as `transfers` records (chain 101): a transaction's
 * token-balance changes for the mint, and the opening balances of a full read.
 * Amounts stay exact (bigint, published as decimal strings).
 */

import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { TransferRecord } from '../../schemas/records.ts';
import type { ParsedTransaction, TokenAccount, TokenBalance } from './types.ts';

/** The System Program address: the zero address of Solana mints and burns. */
export const SOLANA_ZERO = '11111111111111111111111111111111';

/** Net change of each owner's balance of `mint` in `tx` (owners with no change left out), sorted by owner. */
export function ownerDeltas(tx: ParsedTransaction, mint: string): [string, bigint][] {
  const keys = tx.transaction.message.accountKeys;
  const net = new Map<string, bigint>();
  const add = (list: TokenBalance[] | undefined, sign: bigint) => {
    for (const b of list ?? []) {
      if (b.mint !== mint) continue;
      // Old transactions lack `owner`; the token account itself then stands for its owner.
      const owner = b.owner ?? keys[b.accountIndex]?.pubkey;
      if (!owner) continue;
      net.set(owner, (net.get(owner) ?? 0n) + sign * BigInt(b.uiTokenAmount.amount));
    }
  };
  add(tx.meta?.preTokenBalances, -1n);
  add(tx.meta?.postTokenBalances, 1n);
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

/**
 * The transfers of one successful transaction. Identity: the signature stands for
 * the block hash (getTransaction does not give the block's hash, and the signature
 * keeps `chainId:blockHash:logIndex` unique per balance change), logIndex = the
 * change's index within the transaction.
 */
export function transactionTransfers(
  tx: ParsedTransaction,
  mint: string,
  vault: string,
  fallbackTime: number,
): TransferRecord[] {
  if (!tx.meta || tx.meta.err) return [];
  const signature = tx.transaction.signatures[0];
  return pairDeltas(ownerDeltas(tx, mint)).map((t, i) => ({
    chainId: SOLANA_CHAIN_ID,
    blockNumber: tx.slot,
    blockHash: signature,
    blockTimestamp: tx.blockTime ?? fallbackTime,
    txHash: signature,
    logIndex: i,
    removed: false,
    vault,
    token: mint,
    from: t.from,
    to: t.to,
    amount: t.amount.toString(),
  }));
}

/**
 * Opening balances at `slot` as mints from the zero address, one per token account
 * (the account address is their identity, so publishing the same read again is a
 * no-op). Empty accounts are left out.
 */
export function openingTransfers(
  accounts: TokenAccount[],
  mint: string,
  vault: string,
  slot: number,
  time: number,
): TransferRecord[] {
  return accounts
    .map((a) => ({ pubkey: a.pubkey, info: a.account.data.parsed.info }))
    .filter((a) => a.info.mint === mint && BigInt(a.info.tokenAmount.amount) > 0n)
    .sort((a, b) => (a.pubkey < b.pubkey ? -1 : 1))
    .map((a) => ({
      chainId: SOLANA_CHAIN_ID,
      blockNumber: slot,
      blockHash: a.pubkey,
      blockTimestamp: time,
      txHash: a.pubkey,
      logIndex: 0,
      removed: false,
      vault,
      token: mint,
      from: SOLANA_ZERO,
      to: a.info.owner,
      amount: BigInt(a.info.tokenAmount.amount).toString(),
    }));
}
