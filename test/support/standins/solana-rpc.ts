/**
 * A Solana JSON-RPC stand-in over an in-memory ledger of SPL token accounts. It
 * answers the methods the ingesters call (getSlot, getProgramAccounts,
 * getSignaturesForAddress, getTransaction, getBlock, getBlockTime, getAccountInfo)
 * through the devnet's RPC dispatch (devnet/solana/wire.ts: the wire shapes of the
 * published samples, cloned, then filled with the ledger's values), so the code under
 * test parses real-shaped answers. A mint can live under Token-2022 (its accounts are then 170 bytes, with
 * the ImmutableOwner extension of associated accounts), and a transaction can be a
 * plain SPL `Transfer`, which does not list the mint and so is missing from the
 * mint's signatures, as on the real chain.
 */
import {
  answerRpc,
  jsonRpcHandler,
  type RpcAnswer,
  type RpcSource,
  renderTransaction,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from '../../../devnet/solana/wire.ts';
import type { ParsedInstruction } from '../../../ingest/solana/types.ts';
import { address } from '../../fixtures/solana/keys.ts';
import { type Standin, startStandin } from './server.ts';

export { TOKEN_2022_PROGRAM, TOKEN_PROGRAM };

/** Account sizes: a classic token account, and a Token-2022 one with ImmutableOwner (165 + type byte + 4-byte TLV header). */
const ACCOUNT_SPACE: Record<string, number> = { [TOKEN_PROGRAM]: 165, [TOKEN_2022_PROGRAM]: 170 };

interface TokenAccountState {
  pubkey: string;
  mint: string;
  owner: string;
  amount: bigint;
  decimals: number;
}

interface LedgerTx {
  signature: string;
  slot: number;
  blockTime: number;
  accountKeys: { pubkey: string; signer: boolean; writable: boolean }[];
  instructions: ParsedInstruction[];
  logMessages: string[];
  pre: { index: number; account: TokenAccountState; amount: bigint }[];
  post: { index: number; account: TokenAccountState; amount: bigint }[];
  err: unknown;
}

/** A balance change to apply: `owner`'s balance of `mint` moves by `delta` (raw units). */
export interface Change {
  owner: string;
  delta: bigint;
}

export interface TxOptions {
  /** Accounts the transaction also touches (programs, PDAs), after the token accounts. */
  extraKeys?: string[];
  instructions?: ParsedInstruction[];
  logMessages?: string[];
  /** A failed transaction: listed, balances unchanged. */
  err?: unknown;
  /** A plain SPL `Transfer` between token accounts: the mint is not among the keys. */
  plainTransfer?: boolean;
}

/** The ledger: token accounts, transactions, and the current slot (one second per slot). */
export class SolanaLedger {
  slot = 1000;
  readonly t0 = 1_760_000_000;
  readonly skipped = new Set<number>();
  /** Signatures whose getTransaction answers null (not yet available at the commitment). */
  readonly unavailable = new Set<string>();
  /** Token program of each mint (absent = the classic Token program). */
  readonly mintPrograms = new Map<string, string>();
  /** Called after each answer with its method (a test moves the chain between two calls). */
  afterAnswer: ((method: string) => void) | undefined;
  private readonly accounts = new Map<string, TokenAccountState>();
  private readonly txs: LedgerTx[] = [];

  constructor(readonly decimals = 6) {}

  timeOf(slot: number): number {
    return this.t0 + slot;
  }

  /** Applies `changes` to `mint` balances in one transaction at the next slot; returns it. */
  transact(signature: string, mint: string, changes: Change[], opts: TxOptions = {}): LedgerTx {
    const slot = ++this.slot;
    const touched = changes.map((c) => this.account(mint, c.owner));
    const signer = changes[0]?.owner ?? address('payer');
    const keys = [
      signer,
      ...touched.map((a) => a.pubkey),
      ...(opts.plainTransfer ? [] : [mint]),
      this.programOf(mint),
      ...(opts.extraKeys ?? []),
    ];
    const pre = touched.map((a, i) => ({ index: i + 1, account: a, amount: a.amount }));
    if (!opts.err)
      changes.forEach((c, i) => {
        touched[i].amount += c.delta;
        if (touched[i].amount < 0n) throw new Error(`stand-in ledger: ${c.owner} would go negative`);
      });
    const post = touched.map((a, i) => ({ index: i + 1, account: a, amount: a.amount }));
    const tx: LedgerTx = {
      signature,
      slot,
      blockTime: this.timeOf(slot),
      accountKeys: [...new Set(keys)].map((pubkey, i) => ({
        pubkey,
        signer: i === 0,
        writable: i <= touched.length,
      })),
      instructions: opts.instructions ?? [],
      logMessages: opts.logMessages ?? [],
      pre,
      post,
      err: opts.err ?? null,
    };
    this.txs.push(tx);
    return tx;
  }

  /** Current raw balance of `owner` (sum over its accounts of `mint`). */
  balanceOf(mint: string, owner: string): bigint {
    return [...this.accounts.values()]
      .filter((a) => a.mint === mint && a.owner === owner)
      .reduce((s, a) => s + a.amount, 0n);
  }

  /** Every owner with a positive balance of `mint`. */
  holders(mint: string): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const a of this.accounts.values())
      if (a.mint === mint && a.amount > 0n) out.set(a.owner, (out.get(a.owner) ?? 0n) + a.amount);
    return out;
  }

  programOf(mint: string): string {
    return this.mintPrograms.get(mint) ?? TOKEN_PROGRAM;
  }

  private account(mint: string, owner: string): TokenAccountState {
    const pubkey = address(`ata:${owner}:${mint}`);
    let a = this.accounts.get(pubkey);
    if (!a) {
      a = { pubkey, mint, owner, amount: 0n, decimals: this.decimals };
      this.accounts.set(pubkey, a);
    }
    return a;
  }

  /** Answers one JSON-RPC call (result, or a JSON-RPC error object). */
  answer(method: string, params: unknown[]): RpcAnswer {
    const out = answerRpc(this.source, method, params);
    this.afterAnswer?.(method);
    return out;
  }

  /** The ledger as the RPC sees it. */
  private readonly source: RpcSource = {
    head: () => this.slot,
    accountInfo: (mint) => this.mintAccount(mint),
    tokenAccounts: (program, { mint, owner, dataSize }) => {
      const space = ACCOUNT_SPACE[program];
      return [...this.accounts.values()]
        .filter((a) => this.programOf(a.mint) === program && (dataSize === undefined || dataSize === space))
        .filter((a) => (!mint || a.mint === mint) && (!owner || a.owner === owner))
        .map((a) => ({ ...a, program, space }));
    },
    transactions: () => this.txs,
    transaction: (sig) => {
      const tx = this.txs.find((t) => t.signature === sig);
      return tx && !this.unavailable.has(tx.signature) ? this.renderTx(tx) : null;
    },
    blockTimeOf: (slot) => (this.skipped.has(slot) || slot > this.slot ? undefined : this.timeOf(slot)),
    blockHeight: (slot) => slot - 10,
    blockhash: (slot) => address(`block:${slot}`),
  };

  /** getAccountInfo's value for a mint (jsonParsed), owned by its token program. */
  private mintAccount(mint: string) {
    const program = this.programOf(mint);
    const supply = [...this.accounts.values()]
      .filter((a) => a.mint === mint)
      .reduce((s, a) => s + a.amount, 0n);
    return {
      data: {
        parsed: {
          info: {
            decimals: this.decimals,
            freezeAuthority: null,
            isInitialized: true,
            mintAuthority: address('mint-authority'),
            supply: supply.toString(),
          },
          type: 'mint',
        },
        program: program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022',
        space: 82,
      },
      executable: false,
      lamports: 1461600,
      owner: program,
      rentEpoch: Number.MAX_SAFE_INTEGER,
      space: 82,
    };
  }

  private renderTx(tx: LedgerTx) {
    const balance = (b: LedgerTx['pre'][number]) => ({
      accountIndex: b.index,
      mint: b.account.mint,
      owner: b.account.owner,
      programId: this.programOf(b.account.mint),
      amount: b.amount,
      decimals: b.account.decimals,
    });
    return renderTransaction({
      ...tx,
      instructions: tx.instructions.map((i) => ({ ...i, stackHeight: null })),
      innerInstructions: [],
      pre: tx.pre.map(balance),
      post: tx.post.map(balance),
    });
  }
}

/** Serves `ledger` over JSON-RPC (single and batch requests). */
export function startSolanaRpc(ledger: SolanaLedger): Promise<Standin> {
  return startStandin(jsonRpcHandler((method, params) => ledger.answer(method, params)));
}
