/**
 * A deterministic synthetic Solana share mint at a real mint's scale, for the Solana follower's
 * benchmarks and fault tests (served by `synthetic-rpc.ts`): N token accounts (about 8% at zero,
 * half of the owners with two accounts, the top holder above 2^63), 400 ms slots with about 5%
 * skipped, a history of past transactions, and on demand new ones in the mix a real mint sees:
 * `transferChecked`, plain `Transfer` (which does not list the mint), a transfer to a new
 * holder, `mintTo`, `burn`, a transfer then `closeAccount`, and failed transactions. The same
 * seed gives the same chain. Accounts live in typed arrays, so a million cost tens of megabytes.
 * The truth (`holders`, `balances`, `supply`) is the model's own.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { base58 } from '@scure/base';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

export type TxKind =
  | 'transferChecked'
  | 'transfer'
  | 'newHolder'
  | 'mintTo'
  | 'burn'
  | 'transferClose'
  | 'failed';

/** The share of each kind in the generated mix. */
const MIX: [TxKind, number][] = [
  ['transferChecked', 0.4],
  ['transfer', 0.2],
  ['newHolder', 0.1],
  ['mintTo', 0.1],
  ['burn', 0.05],
  ['transferClose', 0.05],
  ['failed', 0.1],
];

/** One account a transaction touched: its index, amount before and after (undefined: absent). */
export interface SynthChange {
  account: number;
  pre?: bigint;
  post?: bigint;
}

export interface SynthTx {
  signature: string;
  slot: number;
  blockTime: number;
  kind: TxKind;
  /** Whether the mint is among the transaction's accounts (a plain Transfer does not list it). */
  listsMint: boolean;
  err: unknown;
  changes: SynthChange[];
  /** The signer (the source's owner). */
  signer: number;
}

export interface SyntheticOptions {
  accounts: number;
  seed?: number;
  program?: 'token' | 'token-2022';
  /** Past transactions before the first head (the history an opening reads). */
  history?: number;
  /** Unix seconds of slot 0. */
  t0?: number;
  /** Room for accounts created later (new holders). */
  spare?: number;
}

/** A seeded stream: AES-128-CTR over zeros (native, fast), read as bytes and floats. */
class Prng {
  private buf = Buffer.alloc(0);
  private at = 0;
  private readonly cipher;
  constructor(seed: number) {
    const key = createHash('sha256').update(`vaultstream-synthetic:${seed}`).digest();
    this.cipher = createCipheriv('aes-128-ctr', key.subarray(0, 16), key.subarray(16, 32));
  }
  private take(n: number): Buffer {
    if (this.at + n > this.buf.length) {
      this.buf = this.cipher.update(Buffer.alloc(Math.max(n, 1 << 16)));
      this.at = 0;
    }
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  /** 0 <= x < 1. */
  float(): number {
    return this.take(4).readUInt32LE(0) / 2 ** 32;
  }
  int(n: number): number {
    return Math.floor(this.float() * n);
  }
  bytes(out: Buffer, at: number, n: number): void {
    for (let i = 0; i < n; i += 1 << 16) {
      const len = Math.min(1 << 16, n - i);
      this.take(len).copy(out, at + i);
    }
  }
}

export class SyntheticMint {
  readonly mint: string;
  readonly program: string;
  readonly t0: number;
  /** Accounts so far (created ones included; closed ones stay with `alive` 0). */
  count: number;
  readonly pubkeyBytes: Buffer;
  readonly ownerBytes: Buffer;
  readonly ownerOf: Uint32Array;
  readonly amount: BigUint64Array;
  readonly alive: Uint8Array;
  private owners: number;
  private readonly pubkeys: (string | undefined)[];
  private readonly ownerNames: (string | undefined)[];
  readonly txs: SynthTx[] = [];
  readonly bySignature = new Map<string, number>();
  /** Transaction indexes listing the mint, and touching each account, oldest first. */
  readonly mintTxs: number[] = [];
  readonly accountTxs = new Map<number, number[]>();
  private readonly skipped = new Set<number>();
  private readonly rng: Prng;
  /** The head slot. */
  slot = 1;
  supply = 0n;
  readonly listeners: ((tx: SynthTx) => void)[] = [];

  constructor(opts: SyntheticOptions) {
    this.rng = new Prng(opts.seed ?? 1);
    this.program = opts.program === 'token-2022' ? TOKEN_2022_PROGRAM : TOKEN_PROGRAM;
    this.t0 = opts.t0 ?? 1_760_000_000;
    const n = opts.accounts;
    const cap = n + (opts.spare ?? 100_000);
    const mintBytes = Buffer.alloc(32);
    this.rng.bytes(mintBytes, 0, 32);
    this.mint = base58.encode(mintBytes);
    this.pubkeyBytes = Buffer.alloc(cap * 32);
    this.rng.bytes(this.pubkeyBytes, 0, cap * 32);
    this.ownerBytes = Buffer.alloc(cap * 32);
    this.rng.bytes(this.ownerBytes, 0, cap * 32);
    this.ownerOf = new Uint32Array(cap);
    this.amount = new BigUint64Array(cap);
    this.alive = new Uint8Array(cap);
    this.pubkeys = new Array(cap);
    this.ownerNames = new Array(cap);
    // Half of the accounts pair up under one owner each; the rest have an owner of their own.
    const paired = Math.floor(n / 2);
    for (let i = 0; i < n; i++) {
      this.ownerOf[i] = i < paired ? i >> 1 : i - paired + (paired >> 1) + 1;
      this.alive[i] = 1;
      const a = this.rng.float() < 0.08 ? 0n : BigInt(1 + this.rng.int(1_000_000_000));
      this.amount[i] = a;
      this.supply += a;
    }
    this.owners = n - paired + (paired >> 1) + 1;
    // The top holder above 2^63 (the supply, a u64, still fits).
    if (n) {
      this.supply += 10_000_000_000_000_000_000n - this.amount[0];
      this.amount[0] = 10_000_000_000_000_000_000n;
    }
    this.count = n;
    const history = opts.history ?? 0;
    // The history spreads over about ten days of slots.
    const gap = Math.max(1, Math.floor((10 * 86_400) / 0.4 / Math.max(1, history)));
    for (let i = 0; i < history; i++) {
      this.slot += 1 + this.rng.int(gap);
      this.transact();
    }
  }

  /** Unix time of `slot` (400 ms slots). */
  timeOf(slot: number): number {
    return this.t0 + Math.floor(slot * 0.4);
  }

  /** Whether `slot` has a block. */
  hasBlock(slot: number): boolean {
    return slot >= 1 && slot <= this.slot && !this.skipped.has(slot);
  }

  /** The next slot (about one in twenty skipped). */
  advance(): number {
    this.slot++;
    if (this.rng.float() < 0.05) this.skipped.add(this.slot++);
    return this.slot;
  }

  pubkey(i: number): string {
    let s = this.pubkeys[i];
    if (s === undefined) {
      s = base58.encode(this.pubkeyBytes.subarray(i * 32, i * 32 + 32));
      this.pubkeys[i] = s;
    }
    return s;
  }

  owner(i: number): string {
    const o = this.ownerOf[i];
    let s = this.ownerNames[o];
    if (s === undefined) {
      s = base58.encode(this.ownerBytes.subarray(o * 32, o * 32 + 32));
      this.ownerNames[o] = s;
    }
    return s;
  }

  /** The 32 bytes of account `i`'s owner. */
  ownerRaw(i: number): Buffer {
    const o = this.ownerOf[i];
    return this.ownerBytes.subarray(o * 32, o * 32 + 32);
  }

  /** The live account with the largest amount. */
  topAccount(): number {
    let top = 0;
    for (let i = 1; i < this.count; i++) if (this.alive[i] && this.amount[i] > this.amount[top]) top = i;
    return top;
  }

  /** Each owner's total (owners at zero left out). */
  balances(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (let i = 0; i < this.count; i++)
      if (this.alive[i] && this.amount[i] > 0n)
        out.set(this.owner(i), (out.get(this.owner(i)) ?? 0n) + this.amount[i]);
    return out;
  }

  /** A live account with a positive amount. */
  private holding(): number {
    for (;;) {
      const i = this.rng.int(this.count);
      if (this.alive[i] && this.amount[i] > 0n && i !== 0) return i;
    }
  }

  private live(): number {
    for (;;) {
      const i = this.rng.int(this.count);
      if (this.alive[i]) return i;
    }
  }

  private pickKind(): TxKind {
    let x = this.rng.float();
    for (const [k, p] of MIX) {
      if (x < p) return k;
      x -= p;
    }
    return 'transferChecked';
  }

  /** One transaction of `kind` (default: drawn from the mix) at the head slot; the listeners are told. */
  transact(kind: TxKind = this.pickKind()): SynthTx {
    const changes: SynthChange[] = [];
    const move = (i: number, to: bigint | undefined) => {
      const pre = this.alive[i] ? this.amount[i] : undefined;
      changes.push({ account: i, pre, post: to });
      this.supply += (to ?? 0n) - (pre ?? 0n);
      this.amount[i] = to ?? 0n;
      this.alive[i] = to === undefined ? 0 : 1;
    };
    const src = this.holding();
    const part = (i: number) =>
      1n + BigInt(this.rng.int(Number(this.amount[i] < 1_000_000n ? this.amount[i] : 1_000_000n)));
    let err: unknown = null;
    switch (kind) {
      case 'transferChecked':
      case 'transfer': {
        const dst = this.live();
        if (dst === src) return this.transact(kind);
        const amt = part(src);
        move(src, this.amount[src] - amt);
        move(dst, this.amount[dst] + amt);
        break;
      }
      case 'newHolder': {
        const dst = this.count++;
        this.ownerOf[dst] = this.owners++;
        const amt = part(src);
        move(src, this.amount[src] - amt);
        move(dst, amt);
        break;
      }
      case 'mintTo':
        move(src, this.amount[src] + BigInt(1 + this.rng.int(1_000_000)));
        break;
      case 'burn':
        move(src, this.amount[src] - part(src));
        break;
      case 'transferClose': {
        const dst = this.live();
        if (dst === src) return this.transact(kind);
        const amt = this.amount[src];
        move(src, undefined);
        move(dst, this.amount[dst] + amt);
        break;
      }
      case 'failed':
        err = { InstructionError: [0, { Custom: 1 }] };
        break;
    }
    const sig = Buffer.alloc(64);
    this.rng.bytes(sig, 0, 64);
    const tx: SynthTx = {
      signature: base58.encode(sig),
      slot: this.slot,
      blockTime: this.timeOf(this.slot),
      kind,
      listsMint: kind !== 'transfer',
      err,
      changes: err ? [{ account: src, pre: this.amount[src], post: this.amount[src] }] : changes,
      signer: src,
    };
    const at = this.txs.length;
    this.txs.push(tx);
    this.bySignature.set(tx.signature, at);
    if (tx.listsMint) this.mintTxs.push(at);
    for (const c of tx.changes) {
      const list = this.accountTxs.get(c.account);
      if (list) list.push(at);
      else this.accountTxs.set(c.account, [at]);
    }
    for (const l of this.listeners) l(tx);
    return tx;
  }
}
