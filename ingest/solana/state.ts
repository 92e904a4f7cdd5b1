/**
 * The follower's state of one mint, indexed per token account and per owner: each account's
 * owner, raw amount and the slot of its last change, each owner's total. A change costs the
 * accounts it touches, whatever the number of holders; the state is as of `slot`.
 */

/** An owner's total over its token accounts of the mint; one record per owner, shared by its accounts. */
interface Owner {
  address: string;
  balance: bigint;
  accounts: number;
}

interface Account {
  owner: Owner;
  amount: bigint;
  /** Slot of the account's last change (or of the read it was first seen in). */
  slot: number;
}

/** One token account as the state has it. */
export interface AccountState {
  pubkey: string;
  owner: string;
  amount: bigint;
  slot: number;
}

export class MintState {
  private readonly accounts = new Map<string, Account>();
  private readonly owners = new Map<string, Owner>();
  /** Sum of every account's amount: the mint's supply when the state is right. */
  supply = 0n;
  /** Owners with a positive total. */
  holders = 0;

  constructor(
    readonly mint: string,
    /** Every change up to this slot is in the state. */
    public slot: number,
  ) {}

  get size(): number {
    return this.accounts.size;
  }

  get(pubkey: string): AccountState | undefined {
    const a = this.accounts.get(pubkey);
    return a && { pubkey, owner: a.owner.address, amount: a.amount, slot: a.slot };
  }

  /** `owner`'s total (0 when it holds nothing). */
  balanceOf(owner: string): bigint {
    return this.owners.get(owner)?.balance ?? 0n;
  }

  /**
   * Puts `pubkey` at `amount` held by `owner`, changed at `slot`; `amount` undefined: the
   * account is gone (closed). An account at zero is kept (it exists on chain, and the re-read
   * lists it).
   */
  set(pubkey: string, owner: string, amount: bigint | undefined, slot: number): void {
    const was = this.accounts.get(pubkey);
    if (was) {
      this.move(was.owner, -was.amount);
      was.owner.accounts--;
      if (was.owner.accounts === 0 && was.owner.balance === 0n) this.owners.delete(was.owner.address);
    }
    if (amount === undefined) {
      this.accounts.delete(pubkey);
      return;
    }
    let o = this.owners.get(owner);
    if (!o) {
      o = { address: owner, balance: 0n, accounts: 0 };
      this.owners.set(owner, o);
    }
    o.accounts++;
    this.move(o, amount);
    if (was) {
      was.owner = o;
      was.amount = amount;
      was.slot = slot;
    } else this.accounts.set(pubkey, { owner: o, amount, slot });
  }

  private move(o: Owner, delta: bigint): void {
    const before = o.balance;
    o.balance += delta;
    this.supply += delta;
    if (before <= 0n && o.balance > 0n) this.holders++;
    else if (before > 0n && o.balance <= 0n) this.holders--;
  }

  /** Every account's last change is now `slot` (the read that found them all). */
  stamp(slot: number): void {
    for (const a of this.accounts.values()) a.slot = slot;
    this.slot = slot;
  }

  /** Every account, in no particular order. */
  *entries(): IterableIterator<AccountState> {
    for (const [pubkey, a] of this.accounts)
      yield { pubkey, owner: a.owner.address, amount: a.amount, slot: a.slot };
  }

  /** Every pubkey (a snapshot: the state may change while it is walked). */
  pubkeys(): string[] {
    return [...this.accounts.keys()];
  }
}
