/**
 * The wire shapes of the synthetic mint's answers (devnet/solana/synthetic-rpc.ts serves them):
 * the mint account, signature lists by the mint or by a token account, jsonParsed transactions
 * with their pre/post token balances, and one token account as getProgramAccounts and
 * programNotification give it (base64 with a dataSlice, or jsonParsed).
 */
import { base58 } from '@scure/base';
import { type SyntheticMint, type SynthTx, TOKEN_PROGRAM } from './synthetic.ts';

export const TOKEN_ACCOUNT_SIZE = 165;
/** A Token-2022 account with the ImmutableOwner extension. */
export const TOKEN_2022_ACCOUNT_SIZE = 170;

/** A slice of an account's bytes, or the parsed form. */
export type AccountForm = { offset: number; length: number } | 'jsonParsed';

export class SyntheticWire {
  readonly space: number;
  private readonly mintBytes: Uint8Array;
  /** One account's bytes, reused: each entry copies out its slice. */
  private readonly bytes: Buffer;
  /** Account index by address, built at the first lookup by an account. */
  private byPubkey?: Map<string, number>;

  constructor(readonly mint: SyntheticMint) {
    this.space = mint.program === TOKEN_PROGRAM ? TOKEN_ACCOUNT_SIZE : TOKEN_2022_ACCOUNT_SIZE;
    this.mintBytes = base58.decode(mint.mint);
    this.bytes = Buffer.alloc(this.space);
  }

  private indexOf(address: string): number | undefined {
    const m = this.mint;
    if (!this.byPubkey || this.byPubkey.size < m.count) {
      this.byPubkey ??= new Map();
      for (let i = this.byPubkey.size; i < m.count; i++) this.byPubkey.set(m.pubkey(i), i);
    }
    return this.byPubkey.get(address);
  }

  accountInfo(address: string, cfg: Record<string, unknown>) {
    if (address !== this.mint.mint) return null;
    const common = {
      executable: false,
      lamports: 1461600,
      owner: this.mint.program,
      rentEpoch: Number.MAX_SAFE_INTEGER,
      space: 82,
    };
    if (cfg.encoding !== 'jsonParsed') return { ...common, data: ['', 'base64'] };
    const info = {
      decimals: 6,
      freezeAuthority: null,
      isInitialized: true,
      mintAuthority: this.mint.mint,
      supply: this.mint.supply.toString(),
    };
    const program = this.mint.program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
    return { ...common, data: { parsed: { info, type: 'mint' }, program, space: 82 } };
  }

  signatures(address: string, cfg: Record<string, unknown>, head: number) {
    const account = address === this.mint.mint ? undefined : this.indexOf(address);
    const list =
      address === this.mint.mint
        ? this.mint.mintTxs
        : account === undefined
          ? []
          : (this.mint.accountTxs.get(account) ?? []);
    const limit = Math.min(Number(cfg.limit ?? 1000), 1000);
    const at = (sig: unknown) => (typeof sig === 'string' ? this.mint.bySignature.get(sig) : undefined);
    const before = at(cfg.before);
    const until = at(cfg.until);
    const out = [];
    for (let k = list.length - 1; k >= 0 && out.length < limit; k--) {
      const i = list[k];
      if (this.mint.txs[i].slot > head) continue;
      if (before !== undefined && i >= before) continue;
      if (until !== undefined && i <= until) break;
      const t = this.mint.txs[i];
      out.push({
        blockTime: t.blockTime,
        confirmationStatus: 'finalized',
        err: t.err,
        memo: null,
        signature: t.signature,
        slot: t.slot,
      });
    }
    return out;
  }

  transaction(t: SynthTx) {
    const signer = { pubkey: this.mint.owner(t.signer), signer: true, source: 'transaction', writable: true };
    const accounts = t.changes.map((c) => ({
      pubkey: this.mint.pubkey(c.account),
      signer: false,
      source: 'transaction',
      writable: true,
    }));
    const programs = [...(t.listsMint ? [this.mint.mint] : []), this.mint.program].map((pubkey) => ({
      pubkey,
      signer: false,
      source: 'transaction',
      writable: false,
    }));
    const balance = (c: SynthTx['changes'][number], v: bigint | undefined, idx: number) =>
      v === undefined
        ? []
        : [
            {
              accountIndex: idx + 1,
              mint: this.mint.mint,
              owner: this.mint.owner(c.account),
              programId: this.mint.program,
              uiTokenAmount: {
                amount: v.toString(),
                decimals: 6,
                uiAmount: Number(v) / 1e6,
                uiAmountString: String(Number(v) / 1e6),
              },
            },
          ];
    return {
      blockTime: t.blockTime,
      meta: {
        computeUnitsConsumed: 6200,
        err: t.err,
        fee: 5000,
        innerInstructions: [],
        logMessages: [
          `Program ${this.mint.program} invoke [1]`,
          `Program log: Instruction: ${t.kind}`,
          `Program ${this.mint.program} success`,
        ],
        postBalances: [1, ...t.changes.map(() => 2039280)],
        postTokenBalances: t.changes.flatMap((c, i) => balance(c, c.post, i)),
        preBalances: [1, ...t.changes.map(() => 2039280)],
        preTokenBalances: t.changes.flatMap((c, i) => balance(c, c.pre, i)),
        rewards: [],
        status: t.err ? { Err: t.err } : { Ok: null },
      },
      slot: t.slot,
      transaction: {
        message: {
          accountKeys: [signer, ...accounts, ...programs],
          addressTableLookups: [],
          instructions: [
            {
              parsed: { info: {}, type: t.kind },
              program: 'spl-token',
              programId: this.mint.program,
              stackHeight: null,
            },
          ],
          recentBlockhash: `${t.slot - 1}`.padStart(43, '1'),
        },
        signatures: [t.signature],
      },
      version: 0,
    };
  }

  /** One account's entry, `slice` of its bytes in base64. */
  entry(i: number, slice: { offset: number; length: number } | 'jsonParsed'): string {
    if (slice === 'jsonParsed') return this.parsedEntry(i);
    const { bytes } = this;
    bytes.fill(0);
    bytes.set(this.mintBytes, 0);
    bytes.set(this.mint.ownerRaw(i), 32);
    bytes.writeBigUInt64LE(this.mint.amount[i], 64);
    bytes[108] = 1;
    if (this.space > TOKEN_ACCOUNT_SIZE) bytes[165] = 2;
    const data = bytes.subarray(slice.offset, slice.offset + slice.length).toString('base64');
    return `{"account":{"data":["${data}","base64"],"executable":false,"lamports":2039280,"owner":"${this.mint.program}","rentEpoch":18446744073709551615,"space":${this.space}},"pubkey":"${this.mint.pubkey(i)}"}`;
  }
  /** One account's entry in `jsonParsed` (as a node answers without base64). */
  parsedEntry(i: number): string {
    const a = this.mint.amount[i];
    const ui = {
      amount: a.toString(),
      decimals: 6,
      uiAmount: Number(a) / 1e6,
      uiAmountString: String(Number(a) / 1e6),
    };
    const info = {
      isNative: false,
      mint: this.mint.mint,
      owner: this.mint.owner(i),
      state: 'initialized',
      tokenAmount: ui,
    };
    const program = this.mint.program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
    const data = { parsed: { info, type: 'account' }, program, space: this.space };
    return JSON.stringify({
      account: {
        data,
        executable: false,
        lamports: 2039280,
        owner: this.mint.program,
        rentEpoch: Number.MAX_SAFE_INTEGER,
        space: this.space,
      },
      pubkey: this.mint.pubkey(i),
    });
  }
}
