/**
 * The follower's per-slot application (ingest/solana/changes.ts) and the account decoding
 * (ingest/solana/accounts.ts), without a node: transactions of one slot applied in either order
 * end at the chain's amounts with no correction; an account changed unseen between two slots
 * gets one correction before the later slot's transfers; a node that sends the whole account
 * instead of the slice asked for is read the same; a Token-2022 mint or multisig is no account.
 */
import { base58 } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { accountOf } from '../../ingest/solana/accounts.ts';
import { correctionId, type MintTx } from '../../ingest/solana/balances.ts';
import { applySlot } from '../../ingest/solana/changes.ts';
import { MintState } from '../../ingest/solana/state.ts';
import { address } from '../fixtures/solana/keys.ts';

const MINT = address('apply-mint');
const [A, B, C] = ['a', 'b', 'c'].map((l) => address(`apply-${l}`));
const [ta, tb, tc] = ['a', 'b', 'c'].map((l) => address(`apply-ata-${l}`));
const site = { mint: MINT, vault: 'v' };
const tx = (signature: string, slot: number, changes: MintTx['changes']): MintTx => ({
  signature,
  slot,
  blockTime: 1_700_000_000 + slot,
  failed: false,
  changes,
});

function opened(): MintState {
  const s = new MintState(MINT, 10);
  s.set(ta, A, 100n, 10);
  s.set(tb, B, 50n, 10);
  return s;
}

describe('applying a slot', () => {
  it('ends at the chain amounts whatever the order of the slot’s transactions, with no correction', () => {
    const t1 = tx('s1', 11, [
      { pubkey: ta, owner: A, pre: 100n, post: 60n },
      { pubkey: tb, owner: B, pre: 50n, post: 90n },
    ]);
    const t2 = tx('s2', 11, [
      { pubkey: ta, owner: A, pre: 60n, post: 0n },
      { pubkey: tc, owner: C, post: 60n },
    ]);
    for (const order of [
      [t1, t2],
      [t2, t1],
    ]) {
      const s = opened();
      const records = applySlot(s, order, site);
      expect(records.every((r) => r.txHash === 's1' || r.txHash === 's2')).toBe(true);
      expect([s.balanceOf(A), s.balanceOf(B), s.balanceOf(C)]).toEqual([0n, 90n, 60n]);
      expect(s.supply).toBe(150n);
      expect(s.holders).toBe(2);
    }
  });

  it('corrects an account changed unseen before the slot, then applies the slot’s own transfer', () => {
    const s = opened();
    // B's account went 50 -> 20 by something not seen (a plain Transfer to C's new account, say).
    const records = applySlot(s, [tx('s3', 12, [{ pubkey: tb, owner: B, pre: 20n, post: 25n }])], site);
    const id = correctionId(MINT, 'before:12:s3');
    expect(records.map((r) => [r.txHash, r.from, r.to, r.amount])).toEqual([
      [id, B, '11111111111111111111111111111111', '30'],
      ['s3', '11111111111111111111111111111111', B, '5'],
    ]);
    expect(s.balanceOf(B)).toBe(25n);
  });
});

describe('decoding an account of a full read', () => {
  it('reads the owner and amount from the slice, or from a whole account a node sent instead', () => {
    const acct = Buffer.alloc(165);
    acct.set(base58.decode(MINT), 0);
    acct.set(base58.decode(A), 32);
    acct.writeBigUInt64LE(12_000_000_000_000_000_000n, 64);
    const slice = acct.subarray(32, 72);
    const wire = (b: Buffer) => ({
      pubkey: ta,
      account: { data: [b.toString('base64'), 'base64'] as [string, string] },
    });
    const want = { pubkey: ta, owner: A, amount: 12_000_000_000_000_000_000n };
    expect(accountOf(wire(slice), true)).toEqual(want);
    expect(accountOf(wire(acct), true)).toEqual(want);
  });

  it('keeps Token-2022 token accounts and drops its mints and multisigs when the filter is not exact', () => {
    const make = (space: number, type?: number) => {
      const b = Buffer.alloc(space);
      b.set(base58.decode(MINT), 0);
      b.set(base58.decode(A), 32);
      b.writeBigUInt64LE(5n, 64);
      if (type !== undefined) b[165] = type;
      return {
        pubkey: ta,
        account: { data: [b.subarray(32, 166).toString('base64'), 'base64'] as [string, string] },
      };
    };
    expect(accountOf(make(165), false)?.amount).toBe(5n);
    expect(accountOf(make(170, 2), false)?.amount).toBe(5n);
    expect(accountOf(make(182, 1), false)).toBeUndefined(); // a mint with extensions
    expect(accountOf(make(82), false)).toBeUndefined(); // a base mint
  });
});
