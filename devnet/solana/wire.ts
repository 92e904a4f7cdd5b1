/**
 * Solana JSON-RPC in the wire shapes of the published samples (`samples/`, cloned,
 * then filled in): the dispatch of the methods the Solana ingester and the mint-flow
 * tracker call (getSlot, getAccountInfo, getProgramAccounts, getSignaturesForAddress,
 * getTransaction, getBlock, getBlockTime) over an `RpcSource`, and the JSON-RPC
 * envelope (single and batch requests). No chain here: the devnet's RPC (`rpc.ts`,
 * over the SVM) and the tests' in-memory ledger stand-in both answer through it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getBase58Encoder } from '@solana/kit';

const SAMPLES = join(import.meta.dirname, 'samples');
const load = (name: string) => JSON.parse(readFileSync(join(SAMPLES, name), 'utf8'));
const TX_TEMPLATE = load('getTransaction.jsonParsed.v0.result.json');
const SIG_TEMPLATE = load('getSignaturesForAddress.response.json').result[0];
const ACCOUNT_TEMPLATE = load('getProgramAccounts.token-owner-filter.jsonParsed.result.trimmed.json')[0];
const NO_BLOCK = load('getBlockTime.error-not-available.response.json').error;
const clone = <T>(v: T): T => structuredClone(v);

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

export type RpcAnswer = { result?: unknown; error?: { code: number; message: string } };

/** The RPC's `uiTokenAmount` of a raw amount. */
export function uiAmount(amount: bigint, decimals: number) {
  const s = amount.toString().padStart(decimals + 1, '0');
  const ui = decimals ? `${s.slice(0, -decimals)}.${s.slice(-decimals)}`.replace(/\.?0+$/, '') : s;
  return {
    amount: amount.toString(),
    decimals,
    uiAmount: amount === 0n ? null : Number(ui),
    uiAmountString: ui,
  };
}

/** One token account as getProgramAccounts lists it. */
export interface WireTokenAccount {
  pubkey: string;
  /** Its token program (the account's owner). */
  program: string;
  space: number;
  mint: string;
  owner: string;
  amount: bigint;
  decimals: number;
}

/** One token balance of a transaction, as `pre/postTokenBalances` state it. */
export interface WireBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  amount: bigint;
  decimals: number;
}

/** What getTransaction and getSignaturesForAddress show of a transaction. */
export interface WireTx {
  signature: string;
  slot: number;
  blockTime: number;
  accountKeys: { pubkey: string; signer: boolean; writable: boolean }[];
  instructions: unknown[];
  innerInstructions: unknown[];
  logMessages: string[];
  /** A failed transaction's error (absent or null: succeeded). */
  err?: unknown;
  pre: WireBalance[];
  post: WireBalance[];
}

/** What getSignaturesForAddress lists of a transaction. */
export type WireSignature = Pick<WireTx, 'signature' | 'slot' | 'blockTime' | 'accountKeys' | 'err'>;

/** The chain an RPC answers about. */
export interface RpcSource {
  /** The head slot (getSlot, and the context slot of the answers). */
  head(): number;
  /** getAccountInfo's `value` (null: no such account). */
  accountInfo(addr: string): unknown;
  /** Token accounts of `program` matching getProgramAccounts' filters (mint at offset 0, owner at 32). */
  tokenAccounts(
    program: string,
    filter: { mint?: string; owner?: string; dataSize?: number },
  ): WireTokenAccount[];
  /** Every transaction, oldest first. */
  transactions(): readonly WireSignature[];
  /** getTransaction's result (null: not available). */
  transaction(signature: string): unknown;
  /** Block time of a slot's block (undefined: no block). */
  blockTimeOf(slot: number): number | undefined;
  blockHeight(slot: number): number;
  blockhash(slot: number): string;
}

const context = (slot: number) => ({ apiVersion: '2.0.15', slot });

/** Answers one JSON-RPC call from `source` (result, or a JSON-RPC error object). */
export function answerRpc(source: RpcSource, method: string, params: unknown[]): RpcAnswer {
  const cfg = (params[1] ?? {}) as Record<string, unknown>;
  switch (method) {
    case 'getSlot':
      return { result: source.head() };
    case 'getAccountInfo':
      return { result: { context: context(source.head()), value: source.accountInfo(String(params[0])) } };
    case 'getProgramAccounts': {
      const slot = source.head();
      if (Number(cfg.minContextSlot ?? 0) > slot)
        return { error: { code: -32016, message: 'Minimum context slot has not been reached' } };
      const filters = (cfg.filters ?? []) as {
        dataSize?: number;
        memcmp?: { offset: number; bytes: string };
      }[];
      const value = source
        .tokenAccounts(String(params[0]), {
          mint: filters.find((f) => f.memcmp?.offset === 0)?.memcmp?.bytes,
          owner: filters.find((f) => f.memcmp?.offset === 32)?.memcmp?.bytes,
          dataSize: filters.find((f) => f.dataSize !== undefined)?.dataSize,
        })
        .map((a) =>
          cfg.encoding === 'base64'
            ? base64Entry(a, cfg.dataSlice as { offset: number; length: number } | undefined)
            : tokenAccountEntry(a),
        );
      return { result: cfg.withContext ? { context: context(slot), value } : value };
    }
    case 'getSignaturesForAddress':
      return { result: signatures(source.transactions(), String(params[0]), cfg) };
    case 'getTransaction':
      return { result: source.transaction(params[0] as string) ?? null };
    case 'getBlock':
    case 'getBlockTime': {
      const slot = Number(params[0]);
      const time = source.blockTimeOf(slot);
      if (time === undefined)
        return { error: { code: NO_BLOCK.code, message: `Block not available for slot ${slot}` } };
      if (method === 'getBlockTime') return { result: time };
      return {
        result: {
          blockHeight: source.blockHeight(slot),
          blockTime: time,
          blockhash: source.blockhash(slot),
          parentSlot: slot - 1,
          previousBlockhash: source.blockhash(slot - 1),
        },
      };
    }
    default:
      return { error: { code: -32601, message: 'Method not found' } };
  }
}

function tokenAccountEntry(a: WireTokenAccount) {
  const entry = clone(ACCOUNT_TEMPLATE);
  entry.pubkey = a.pubkey;
  entry.account.owner = a.program;
  entry.account.space = a.space;
  entry.account.data.space = a.space;
  entry.account.data.program = a.program === TOKEN_PROGRAM ? 'spl-token' : 'spl-token-2022';
  entry.account.rentEpoch = Number.MAX_SAFE_INTEGER;
  Object.assign(entry.account.data.parsed.info, {
    mint: a.mint,
    owner: a.owner,
    tokenAmount: uiAmount(a.amount, a.decimals),
  });
  return entry;
}

const base58 = getBase58Encoder();

/**
 * An SPL token account's bytes: mint, owner, amount (u64 LE), state Initialized; a Token-2022
 * account longer than 165 bytes has the account type (Account) at 165 and its extensions after.
 */
export function tokenAccountBytes(a: Pick<WireTokenAccount, 'mint' | 'owner' | 'amount' | 'space'>): Buffer {
  const b = Buffer.alloc(a.space);
  b.set(base58.encode(a.mint), 0);
  b.set(base58.encode(a.owner), 32);
  b.writeBigUInt64LE(a.amount, 64);
  b[108] = 1;
  if (a.space > 165) b[165] = 2;
  return b;
}

/** One account in `base64` encoding, cut to `slice` (getProgramAccounts' dataSlice). */
function base64Entry(a: WireTokenAccount, slice?: { offset: number; length: number }) {
  const bytes = tokenAccountBytes(a);
  const data = slice ? bytes.subarray(slice.offset, slice.offset + slice.length) : bytes;
  return {
    account: {
      data: [data.toString('base64'), 'base64'],
      executable: false,
      lamports: 2039280,
      owner: a.program,
      rentEpoch: Number.MAX_SAFE_INTEGER,
      space: a.space,
    },
    pubkey: a.pubkey,
  };
}

/** getSignaturesForAddress: the transactions listing `addr`, newest first, paged by before/until/limit. */
function signatures(txs: readonly WireSignature[], addr: string, cfg: Record<string, unknown>) {
  const limit = Math.min(Number(cfg.limit ?? 1000), 1000);
  const list = txs.filter((t) => t.accountKeys.some((k) => k.pubkey === addr)).reverse();
  let start = 0;
  if (cfg.before) start = list.findIndex((t) => t.signature === cfg.before) + 1;
  const out = [];
  for (let i = start; i < list.length && out.length < limit; i++) {
    if (list[i].signature === cfg.until) break;
    const entry = clone(SIG_TEMPLATE);
    Object.assign(entry, {
      signature: list[i].signature,
      slot: list[i].slot,
      err: list[i].err ?? null,
      memo: null,
      blockTime: list[i].blockTime,
      confirmationStatus: 'finalized',
    });
    out.push(entry);
  }
  return out;
}

function tokenBalance(b: WireBalance) {
  const entry = clone(TX_TEMPLATE.meta.preTokenBalances[0]);
  Object.assign(entry, {
    accountIndex: b.accountIndex,
    mint: b.mint,
    owner: b.owner,
    programId: b.programId,
    uiTokenAmount: uiAmount(b.amount, b.decimals),
  });
  return entry;
}

/**
 * getTransaction (jsonParsed, v0) of `tx`; what it does not state (version, fee, compute
 * units, recent blockhash) keeps the sample's values for the caller to fill in.
 */
export function renderTransaction(tx: WireTx) {
  const out = clone(TX_TEMPLATE);
  out.slot = tx.slot;
  out.blockTime = tx.blockTime;
  out.transaction.signatures = [tx.signature];
  out.transaction.message.accountKeys = tx.accountKeys.map((k) => ({ ...k, source: 'transaction' }));
  out.transaction.message.instructions = tx.instructions;
  out.transaction.message.addressTableLookups = [];
  out.meta.err = tx.err ?? null;
  out.meta.status = tx.err ? { Err: tx.err } : { Ok: null };
  out.meta.logMessages = tx.logMessages;
  out.meta.innerInstructions = tx.innerInstructions;
  out.meta.preTokenBalances = tx.pre.map(tokenBalance);
  out.meta.postTokenBalances = tx.post.map(tokenBalance);
  out.meta.preBalances = tx.accountKeys.map(() => 2039280);
  out.meta.postBalances = tx.accountKeys.map(() => 2039280);
  return out;
}

type Call = { id: unknown; method: string; params?: unknown[] };

/** A JSON server's handler answering JSON-RPC (single and batch requests) with `answer`. */
export function jsonRpcHandler(answer: (method: string, params: unknown[]) => RpcAnswer) {
  return (req: { body: unknown }) => {
    const one = (call: Call) => ({ jsonrpc: '2.0', id: call.id, ...answer(call.method, call.params ?? []) });
    const body = req.body as Call | Call[] | undefined;
    // A request without a JSON-RPC body (a websocket upgrade this server does not take).
    if (!body || typeof body !== 'object')
      return { status: 400, body: { error: 'a JSON-RPC POST is expected' } };
    return { body: Array.isArray(body) ? body.map(one) : one(body) };
  };
}
