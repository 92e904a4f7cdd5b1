/**
 * Transactions of the mint, read in JSON-RPC batches of `batchSize`, several batches at once
 * (the transport's request limiter keeps them within the chain's requests per second and in
 * flight). A transaction the node does not have yet (null at the commitment) ends the list: the
 * ones before it are returned, the rest wait for the next round.
 */
import type { MintTx } from './balances.ts';
import { mintTx } from './balances.ts';
import type { SolanaRpc } from './rpc.ts';
import type { ParsedTransaction, SignatureInfo } from './types.ts';

export interface TransactionReads {
  commitment: string;
  batchSize: number;
  /** Batches in flight at once. */
  concurrency: number;
  /** Block time when the node gives none. */
  fallbackTime: number;
}

/**
 * The transactions of `sigs` (in their order) as `MintTx`; failed ones are not read (their
 * signature says so); stops before the first one not available.
 */
export async function readTransactions(
  rpc: SolanaRpc,
  mint: string,
  sigs: SignatureInfo[],
  opts: TransactionReads,
): Promise<{ txs: MintTx[]; complete: boolean }> {
  const wanted = sigs.filter((s) => !s.err);
  const batches: SignatureInfo[][] = [];
  for (let i = 0; i < wanted.length; i += opts.batchSize) batches.push(wanted.slice(i, i + opts.batchSize));
  const answers = new Map<string, ParsedTransaction | null>();
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const batch = batches[next++];
      const got = await rpc.batch<ParsedTransaction | null>(
        batch.map((s) => ({
          method: 'getTransaction',
          params: [
            s.signature,
            { commitment: opts.commitment, encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 },
          ],
        })),
      );
      for (const [i, s] of batch.entries()) answers.set(s.signature, got[i] ?? null);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, batches.length) }, worker));
  const txs: MintTx[] = [];
  for (const s of sigs) {
    if (s.err) {
      txs.push({
        signature: s.signature,
        slot: s.slot,
        blockTime: s.blockTime ?? opts.fallbackTime,
        failed: true,
        changes: [],
      });
      continue;
    }
    const tx = answers.get(s.signature);
    if (!tx) return { txs, complete: false };
    txs.push(mintTx(tx, mint, s.blockTime ?? opts.fallbackTime));
  }
  return { txs, complete: true };
}
