/**
 * JSON-RPC in front of the devnet's `SolanaChain`: the methods the Solana ingester
 * and the mint-flow tracker call, answered (`wire.ts`, in the wire shapes of the
 * published samples) from the SVM's accounts and the chain's ledger. Single and
 * batch requests.
 */
import { createHash } from 'node:crypto';
import { address, getBase58Decoder } from '@solana/kit';
import { type JsonServer, startJsonServer } from '../services/server.ts';
import type { SolanaChain } from './chain.ts';
import { type LedgerTx, SHARE_DECIMALS, TOKEN_PROGRAM } from './ledger.ts';
import { answerRpc, jsonRpcHandler, type RpcAnswer, type RpcSource, renderTransaction } from './wire.ts';

const TOKEN_ACCOUNT_SIZE = 165;

/** A slot's block hash: base58 of 32 bytes derived from the slot (stable across calls). */
export function blockhash(slot: number): string {
  return getBase58Decoder().decode(createHash('sha256').update(`vaultstream-devnet:block:${slot}`).digest());
}

/** `chain` as the RPC sees it. */
function source(chain: SolanaChain): RpcSource {
  return {
    head: () => chain.head(),
    accountInfo: (addr) => accountInfo(chain, addr),
    tokenAccounts(program, { mint, owner, dataSize }) {
      if (program !== TOKEN_PROGRAM || !mint || (dataSize !== undefined && dataSize !== TOKEN_ACCOUNT_SIZE))
        return [];
      return chain
        .accountsOf(mint)
        .filter((a) => !owner || a.owner === owner)
        .map((a) => ({ ...a, mint, program, space: TOKEN_ACCOUNT_SIZE, decimals: SHARE_DECIMALS }));
    },
    transactions: () => chain.txs,
    transaction(signature) {
      const tx = chain.txs.find((t) => t.signature === signature);
      return tx ? renderTx(tx) : null;
    },
    blockTimeOf: (slot) => chain.timeOf(slot),
    blockHeight: (slot) => slot,
    blockhash,
  };
}

export function answer(chain: SolanaChain, method: string, params: unknown[]): RpcAnswer {
  return answerRpc(source(chain), method, params);
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

function renderTx(tx: LedgerTx) {
  const balance = (b: LedgerTx['pre'][number]) => ({
    ...b,
    programId: TOKEN_PROGRAM,
    decimals: SHARE_DECIMALS,
  });
  const out = renderTransaction({ ...tx, pre: tx.pre.map(balance), post: tx.post.map(balance) });
  out.version = 0;
  out.transaction.message.recentBlockhash = blockhash(tx.slot - 1);
  out.meta.fee = tx.fee;
  out.meta.computeUnitsConsumed = tx.computeUnits;
  out.meta.loadedAddresses = { readonly: [], writable: [] };
  return out;
}

/** Serves `chain` over JSON-RPC on 127.0.0.1 (a free port). */
export function startSolanaRpc(chain: SolanaChain): Promise<JsonServer> {
  const src = source(chain);
  return startJsonServer(jsonRpcHandler((method, params) => answerRpc(src, method, params)));
}
