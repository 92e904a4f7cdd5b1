/**
 * A Solana JSON-RPC stand-in over an in-memory ledger of SPL token accounts. It
 * answers the methods the ingesters call (getSlot, getProgramAccounts,
 * getSignaturesForAddress, getTransaction, getBlock, getBlockTime, getAccountInfo)
 * in the wire shapes of the published samples in test/fixtures/solana/ (cloned,
 * then filled with the ledger's values), so the code under test parses real-shaped
 * answers. A mint can live under Token-2022 (its accounts are then 170 bytes, with
 * the ImmutableOwner extension of associated accounts), and a transaction can be a
 * plain SPL `Transfer`, which does not list the mint and so is missing from the
 * mint's signatures, as on the real chain.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ParsedInstruction } from '../../../ingest/solana/types.ts';
import { address } from '../../fixtures/solana/keys.ts';
import { type Standin, type StandinRequest, startStandin } from './server.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures/solana');
const load = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const TX_TEMPLATE = load('getTransaction.jsonParsed.v0.result.json');
const SIG_TEMPLATE = load('getSignaturesForAddress.response.json').result[0];
const ACCOUNT_TEMPLATE = load('getProgramAccounts.token-owner-filter.jsonParsed.result.trimmed.json')[0];
const NO_BLOCK_TEMPLATE = load('getBlockTime.error-not-available.response.json').error;
const clone = <T>(v: T): T => structuredClone(v);

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
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
  answer(method: string, params: unknown[]): { result?: unknown; error?: { code: number; message: string } } {
    const out = this.answerOne(method, params);
    this.afterAnswer?.(method);
    return out;
  }

  private answerOne(
    method: string,
    params: unknown[],
  ): { result?: unknown; error?: { code: number; message: string } } {
    const cfg = (params[1] ?? {}) as Record<string, unknown>;
    switch (method) {
      case 'getSlot':
        return { result: this.slot };
      case 'getProgramAccounts':
        if (Number(cfg.minContextSlot ?? 0) > this.slot)
          return { error: { code: -32016, message: 'Minimum context slot has not been reached' } };
        return { result: this.programAccounts(params[0] as string, params[1] as Record<string, unknown>) };
      case 'getAccountInfo':
        return { result: this.mintAccount(params[0] as string) };
      case 'getSignaturesForAddress':
        return { result: this.signatures(params[0] as string, cfg) };
      case 'getTransaction': {
        const tx = this.txs.find((t) => t.signature === params[0]);
        return { result: tx && !this.unavailable.has(tx.signature) ? this.renderTx(tx) : null };
      }
      case 'getBlock':
      case 'getBlockTime': {
        const slot = params[0] as number;
        if (this.skipped.has(slot) || slot > this.slot)
          return {
            error: { code: NO_BLOCK_TEMPLATE.code, message: `Block not available for slot ${slot}` },
          };
        if (method === 'getBlockTime') return { result: this.timeOf(slot) };
        return {
          result: {
            blockHeight: slot - 10,
            blockTime: this.timeOf(slot),
            blockhash: address(`block:${slot}`),
            parentSlot: slot - 1,
            previousBlockhash: address(`block:${slot - 1}`),
          },
        };
      }
      default:
        return { error: { code: -32601, message: 'Method not found' } };
    }
  }

  private programAccounts(program: string, cfg: Record<string, unknown>) {
    const filters = (cfg.filters ?? []) as {
      dataSize?: number;
      memcmp?: { offset: number; bytes: string };
    }[];
    const mint = filters.find((f) => f.memcmp?.offset === 0)?.memcmp?.bytes;
    const owner = filters.find((f) => f.memcmp?.offset === 32)?.memcmp?.bytes;
    const dataSize = filters.find((f) => f.dataSize !== undefined)?.dataSize;
    const space = ACCOUNT_SPACE[program];
    const value = [...this.accounts.values()]
      .filter((a) => this.programOf(a.mint) === program && (dataSize === undefined || dataSize === space))
      .filter((a) => (!mint || a.mint === mint) && (!owner || a.owner === owner))
      .map((a) => {
        const entry = clone(ACCOUNT_TEMPLATE);
        entry.pubkey = a.pubkey;
        entry.account.owner = program;
        entry.account.space = space;
        entry.account.data.space = space;
        entry.account.data.program = program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
        entry.account.rentEpoch = Number.MAX_SAFE_INTEGER;
        Object.assign(entry.account.data.parsed.info, {
          mint: a.mint,
          owner: a.owner,
          tokenAmount: uiAmount(a.amount, a.decimals),
        });
        return entry;
      });
    return cfg.withContext ? { context: { apiVersion: '2.0.15', slot: this.slot }, value } : value;
  }

  /** getAccountInfo of a mint (jsonParsed), owned by its token program. */
  private mintAccount(mint: string) {
    const program = this.programOf(mint);
    const supply = [...this.accounts.values()]
      .filter((a) => a.mint === mint)
      .reduce((s, a) => s + a.amount, 0n);
    return {
      context: { apiVersion: '2.0.15', slot: this.slot },
      value: {
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
      },
    };
  }

  private signatures(addr: string, cfg: Record<string, unknown>) {
    const limit = Math.min(Number(cfg.limit ?? 1000), 1000);
    const list = this.txs.filter((t) => t.accountKeys.some((k) => k.pubkey === addr)).reverse();
    let start = 0;
    if (cfg.before) start = list.findIndex((t) => t.signature === cfg.before) + 1;
    const out = [];
    for (let i = start; i < list.length && out.length < limit; i++) {
      if (list[i].signature === cfg.until) break;
      const entry = clone(SIG_TEMPLATE);
      Object.assign(entry, {
        signature: list[i].signature,
        slot: list[i].slot,
        err: list[i].err,
        blockTime: list[i].blockTime,
      });
      out.push(entry);
    }
    return out;
  }

  private renderTx(tx: LedgerTx) {
    const out = clone(TX_TEMPLATE);
    const balance = (b: LedgerTx['pre'][number]) => {
      const entry = clone(TX_TEMPLATE.meta.preTokenBalances[0]);
      Object.assign(entry, {
        accountIndex: b.index,
        mint: b.account.mint,
        owner: b.account.owner,
        programId: this.programOf(b.account.mint),
        uiTokenAmount: uiAmount(b.amount, b.account.decimals),
      });
      return entry;
    };
    out.slot = tx.slot;
    out.blockTime = tx.blockTime;
    out.transaction.signatures = [tx.signature];
    out.transaction.message.accountKeys = tx.accountKeys.map((k) => ({ ...k, source: 'transaction' }));
    out.transaction.message.instructions = tx.instructions.map((i) => ({ ...i, stackHeight: null }));
    out.transaction.message.addressTableLookups = [];
    out.meta.err = tx.err;
    out.meta.status = tx.err ? { Err: tx.err } : { Ok: null };
    out.meta.logMessages = tx.logMessages;
    out.meta.innerInstructions = [];
    out.meta.preTokenBalances = tx.pre.map(balance);
    out.meta.postTokenBalances = tx.post.map(balance);
    out.meta.preBalances = tx.accountKeys.map(() => 2039280);
    out.meta.postBalances = tx.accountKeys.map(() => 2039280);
    return out;
  }
}

function uiAmount(amount: bigint, decimals: number) {
  const s = amount.toString().padStart(decimals + 1, '0');
  const ui = decimals ? `${s.slice(0, -decimals)}.${s.slice(-decimals)}`.replace(/\.?0+$/, '') : s;
  return {
    amount: amount.toString(),
    decimals,
    uiAmount: amount === 0n ? null : Number(ui),
    uiAmountString: ui,
  };
}

/** Serves `ledger` over JSON-RPC (single and batch requests). */
export function startSolanaRpc(ledger: SolanaLedger): Promise<Standin> {
  return startStandin((req: StandinRequest) => {
    const one = (call: { id: unknown; method: string; params?: unknown[] }) => ({
      jsonrpc: '2.0',
      id: call.id,
      ...ledger.answer(call.method, call.params ?? []),
    });
    const body = req.body as Parameters<typeof one>[0] | Parameters<typeof one>[0][];
    return { body: Array.isArray(body) ? body.map(one) : one(body) };
  });
}
