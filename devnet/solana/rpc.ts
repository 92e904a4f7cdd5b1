/**
 * JSON-RPC in front of the devnet's `SolanaChain`: the methods the Solana ingester
 * and the mint-flow tracker call (getSlot, getAccountInfo, getProgramAccounts,
 * getSignaturesForAddress, getTransaction, getBlock, getBlockTime), answered from
 * the SVM's accounts and the chain's ledger in the wire shapes of the published
 * samples (`samples/`, cloned and filled in). Single and batch requests.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { address, getBase58Decoder } from '@solana/kit';
import { type JsonServer, startJsonServer } from '../services/server.ts';
import { type LedgerTx, SHARE_DECIMALS, type SolanaChain, TOKEN_PROGRAM, uiAmount } from './chain.ts';

const SAMPLES = join(import.meta.dirname, 'samples');
const load = (name: string) => JSON.parse(readFileSync(join(SAMPLES, name), 'utf8'));
const TX_TEMPLATE = load('getTransaction.jsonParsed.v0.result.json');
const SIG_TEMPLATE = load('getSignaturesForAddress.response.json').result[0];
const ACCOUNT_TEMPLATE = load('getProgramAccounts.token-owner-filter.jsonParsed.result.trimmed.json')[0];
const NO_BLOCK = load('getBlockTime.error-not-available.response.json').error;
const clone = <T>(v: T): T => structuredClone(v);
const TOKEN_ACCOUNT_SIZE = 165;
const CONTEXT = (slot: number) => ({ apiVersion: '2.0.15', slot });

/** A slot's block hash: base58 of 32 bytes derived from the slot (stable across calls). */
export function blockhash(slot: number): string {
  return getBase58Decoder().decode(createHash('sha256').update(`vaultstream-devnet:block:${slot}`).digest());
}

type Answer = { result?: unknown; error?: { code: number; message: string } };

export function answer(chain: SolanaChain, method: string, params: unknown[]): Answer {
  const cfg = (params[1] ?? {}) as Record<string, unknown>;
  switch (method) {
    case 'getSlot':
      return { result: chain.head() };
    case 'getAccountInfo':
      return { result: { context: CONTEXT(chain.head()), value: accountInfo(chain, String(params[0])) } };
    case 'getProgramAccounts':
      return { result: programAccounts(chain, String(params[0]), cfg) };
    case 'getSignaturesForAddress':
      return { result: signatures(chain, String(params[0]), cfg) };
    case 'getTransaction': {
      const tx = chain.txs.find((t) => t.signature === params[0]);
      return { result: tx ? renderTx(tx) : null };
    }
    case 'getBlock':
    case 'getBlockTime': {
      const slot = Number(params[0]);
      const time = chain.timeOf(slot);
      if (time === undefined)
        return { error: { code: NO_BLOCK.code, message: `Block not available for slot ${slot}` } };
      if (method === 'getBlockTime') return { result: time };
      const hash = blockhash;
      return {
        result: {
          blockHeight: slot,
          blockTime: time,
          blockhash: hash(slot),
          parentSlot: slot - 1,
          previousBlockhash: hash(slot - 1),
        },
      };
    }
    default:
      return { error: { code: -32601, message: 'Method not found' } };
  }
}

/** getAccountInfo (jsonParsed) of a mint; other accounts as the SVM has them (base64). */
function accountInfo(chain: SolanaChain, addr: string) {
  const a = chain.svm.getAccount(address(addr));
  if (!a.exists) return null;
  const common = {
    executable: a.executable,
    lamports: Number(a.lamports),
    owner: a.programAddress as string,
    rentEpoch: Number.MAX_SAFE_INTEGER,
    space: a.data.length,
  };
  if (!chain.isMint(addr)) return { ...common, data: [Buffer.from(a.data).toString('base64'), 'base64'] };
  return {
    ...common,
    data: {
      parsed: {
        info: {
          decimals: SHARE_DECIMALS,
          freezeAuthority: null,
          isInitialized: true,
          mintAuthority: chain.authority.address,
          supply: chain.supplyOf(addr).toString(),
        },
        type: 'mint',
      },
      program: 'spl-token',
      space: a.data.length,
    },
  };
}

function programAccounts(chain: SolanaChain, program: string, cfg: Record<string, unknown>) {
  const slot = chain.head();
  if (Number(cfg.minContextSlot ?? 0) > slot)
    return { error: { code: -32016, message: 'Minimum context slot has not been reached' } };
  const filters = (cfg.filters ?? []) as { dataSize?: number; memcmp?: { offset: number; bytes: string } }[];
  const mint = filters.find((f) => f.memcmp?.offset === 0)?.memcmp?.bytes;
  const owner = filters.find((f) => f.memcmp?.offset === 32)?.memcmp?.bytes;
  const size = filters.find((f) => f.dataSize !== undefined)?.dataSize;
  const value =
    program !== TOKEN_PROGRAM || !mint || (size !== undefined && size !== TOKEN_ACCOUNT_SIZE)
      ? []
      : chain
          .accountsOf(mint)
          .filter((a) => !owner || a.owner === owner)
          .map((a) => {
            const entry = clone(ACCOUNT_TEMPLATE);
            entry.pubkey = a.pubkey;
            entry.account.owner = program;
            entry.account.space = TOKEN_ACCOUNT_SIZE;
            entry.account.data.space = TOKEN_ACCOUNT_SIZE;
            entry.account.data.program = 'spl-token';
            entry.account.rentEpoch = Number.MAX_SAFE_INTEGER;
            Object.assign(entry.account.data.parsed.info, {
              mint,
              owner: a.owner,
              tokenAmount: uiAmount(a.amount, SHARE_DECIMALS),
            });
            return entry;
          });
  return cfg.withContext ? { context: CONTEXT(slot), value } : value;
}

function signatures(chain: SolanaChain, addr: string, cfg: Record<string, unknown>) {
  const limit = Math.min(Number(cfg.limit ?? 1000), 1000);
  const list = chain.txs.filter((t) => t.accountKeys.some((k) => k.pubkey === addr)).reverse();
  let start = 0;
  if (cfg.before) start = list.findIndex((t) => t.signature === cfg.before) + 1;
  const out = [];
  for (let i = start; i < list.length && out.length < limit; i++) {
    if (list[i].signature === cfg.until) break;
    const entry = clone(SIG_TEMPLATE);
    Object.assign(entry, {
      signature: list[i].signature,
      slot: list[i].slot,
      err: null,
      memo: null,
      blockTime: list[i].blockTime,
      confirmationStatus: 'finalized',
    });
    out.push(entry);
  }
  return out;
}

function renderTx(tx: LedgerTx) {
  const out = clone(TX_TEMPLATE);
  const balance = (b: LedgerTx['pre'][number]) => {
    const entry = clone(TX_TEMPLATE.meta.preTokenBalances[0]);
    Object.assign(entry, {
      accountIndex: b.accountIndex,
      mint: b.mint,
      owner: b.owner,
      programId: TOKEN_PROGRAM,
      uiTokenAmount: uiAmount(b.amount, SHARE_DECIMALS),
    });
    return entry;
  };
  out.slot = tx.slot;
  out.blockTime = tx.blockTime;
  out.version = 0;
  out.transaction.signatures = [tx.signature];
  out.transaction.message.accountKeys = tx.accountKeys.map((k) => ({ ...k, source: 'transaction' }));
  out.transaction.message.instructions = tx.instructions;
  out.transaction.message.addressTableLookups = [];
  out.transaction.message.recentBlockhash = blockhash(tx.slot - 1);
  out.meta.err = null;
  out.meta.status = { Ok: null };
  out.meta.fee = tx.fee;
  out.meta.computeUnitsConsumed = tx.computeUnits;
  out.meta.logMessages = tx.logMessages;
  out.meta.innerInstructions = tx.innerInstructions;
  out.meta.preTokenBalances = tx.pre.map(balance);
  out.meta.postTokenBalances = tx.post.map(balance);
  out.meta.preBalances = tx.accountKeys.map(() => 2039280);
  out.meta.postBalances = tx.accountKeys.map(() => 2039280);
  out.meta.loadedAddresses = { readonly: [], writable: [] };
  return out;
}

/** Serves `chain` over JSON-RPC on 127.0.0.1 (a free port). */
export function startSolanaRpc(chain: SolanaChain): Promise<JsonServer> {
  return startJsonServer((req) => {
    const one = (call: { id: unknown; method: string; params?: unknown[] }) => {
      const a = answer(chain, call.method, call.params ?? []);
      // programAccounts answers an error object for an unmet minContextSlot.
      const r = a.result as Answer | undefined;
      return { jsonrpc: '2.0', id: call.id, ...(r && typeof r === 'object' && 'error' in r ? r : a) };
    };
    const body = req.body as Parameters<typeof one>[0] | Parameters<typeof one>[0][];
    return { body: Array.isArray(body) ? body.map(one) : one(body) };
  });
}
