/**
 * The follower's per-owner ledger and the reconciliation against a full account
 * read. The ledger holds what the follower has published for each owner (raw
 * units as decimal strings, owners at zero left out); it lives in the follower's
 * checkpoint and is saved atomically with it, so it always equals the transfers
 * published up to the checkpoint. Corrections are transfers that move the ledger
 * to the chain's balances at the read slot.
 */
import { createHash } from 'node:crypto';
import { getBase58Decoder } from '@solana/web3.js';
import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { TransferRecord } from '../../schemas/records.ts';
import { pairDeltas, SOLANA_ZERO } from './balances.ts';
import type { TokenAccount } from './types.ts';

/** Owner → raw balance (decimal string); JSON-safe for the checkpoint. */
export type OwnerLedger = Record<string, string>;

/** `ledger` after `records` (the zero address is the mint/burn side, not an owner). */
export function applyTransfers(ledger: OwnerLedger, records: TransferRecord[]): OwnerLedger {
  const out = new Map(Object.entries(ledger).map(([o, v]) => [o, BigInt(v)]));
  const move = (owner: string, delta: bigint) => {
    if (owner !== SOLANA_ZERO) out.set(owner, (out.get(owner) ?? 0n) + delta);
  };
  for (const r of records) {
    move(r.from, -BigInt(r.amount));
    move(r.to, BigInt(r.amount));
  }
  return Object.fromEntries([...out].filter(([, v]) => v !== 0n).map(([o, v]) => [o, v.toString()]));
}

/** Each owner's total over its token accounts (owners at zero left out). */
export function ownerBalances(accounts: TokenAccount[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const a of accounts) {
    const { owner, tokenAmount } = a.account.data.parsed.info;
    out.set(owner, (out.get(owner) ?? 0n) + BigInt(tokenAmount.amount));
  }
  for (const [o, v] of out) if (v === 0n) out.delete(o);
  return out;
}

/**
 * The synthetic transaction id of the corrections at `slot`: base58 of
 * sha512(mint, slot), 64 bytes like a signature, so a re-run at the same slot
 * names the same events and the consumers drop them.
 */
export function reconcileId(mint: string, slot: number): string {
  const digest = createHash('sha512').update(`vaultstream:solana-reconcile:${mint}:${slot}`).digest();
  return getBase58Decoder().decode(digest);
}

/**
 * Transfers that turn `ledger` into `chain` (both as of `slot`), owner order:
 * decreases paired with increases, and only the net difference of the totals
 * (a mint or burn the follower missed) from or to the zero address.
 */
export function correctionTransfers(
  ledger: OwnerLedger,
  chain: Map<string, bigint>,
  at: { mint: string; vault: string; slot: number; time: number },
): TransferRecord[] {
  const owners = new Set([...Object.keys(ledger), ...chain.keys()]);
  const diffs: [string, bigint][] = [...owners]
    .map((o): [string, bigint] => [o, (chain.get(o) ?? 0n) - BigInt(ledger[o] ?? '0')])
    .filter(([, d]) => d !== 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (!diffs.length) return [];
  const id = reconcileId(at.mint, at.slot);
  return pairDeltas(diffs).map((t, i) => ({
    chainId: SOLANA_CHAIN_ID,
    blockNumber: at.slot,
    blockHash: id,
    blockTimestamp: at.time,
    txHash: id,
    logIndex: i,
    removed: false,
    vault: at.vault,
    token: at.mint,
    from: t.from,
    to: t.to,
    amount: t.amount.toString(),
  }));
}
