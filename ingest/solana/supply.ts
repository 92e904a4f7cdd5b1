/**
 * The check of a full read against the mint's supply: the token accounts of a mint add up to its
 * supply at every slot, so a read whose total differs is wrong (a node that left an account out,
 * or answered two slots at once) and must not replace the state. The supply is read from the
 * mint account after the read, at a context slot S2 no older than the read's S; between S and S2
 * only a mint or a burn changes it, and both list the mint, so the supply at S is the one at S2
 * less what the mint's transactions in (S, S2] added.
 */
import { VaultstreamError } from '../../core/errors.ts';
import { nodeFault, type SolanaRpc } from './rpc.ts';
import { signaturesSince } from './signatures.ts';
import { readTransactions, type TransactionReads } from './transactions.ts';

/** The supply of `mint` at `slot` (see the module comment); `floor`: a context slot below it is that node's fault. */
export async function supplyAt(
  rpc: SolanaRpc,
  mint: string,
  slot: number,
  opts: TransactionReads & { limit: number },
): Promise<bigint> {
  const { context, value } = await rpc.call<{
    context: { slot: number };
    value: { data: { parsed: { info: { supply: string } } } } | null;
  }>(
    'getAccountInfo',
    [mint, { commitment: opts.commitment, encoding: 'jsonParsed', minContextSlot: slot }],
    (r, url) => {
      if (r.context.slot < slot)
        throw nodeFault(url, 'getAccountInfo', `answered slot ${r.context.slot}, behind ${slot}`);
    },
  );
  const supply = BigInt(value?.data.parsed.info.supply ?? '0');
  if (context.slot === slot) return supply;
  const later = (
    await signaturesSince(rpc, mint, {
      commitment: opts.commitment,
      limit: opts.limit,
      stop: (s) => s.slot <= slot,
    })
  ).filter((s) => s.slot <= context.slot);
  const { txs, complete } = await readTransactions(rpc, mint, later, opts);
  if (!complete)
    throw new VaultstreamError(
      'RPC_UNAVAILABLE',
      `solana: a transaction after slot ${slot} is not available yet`,
      {
        retryable: true,
      },
    );
  let added = 0n;
  for (const t of txs) if (!t.failed) for (const c of t.changes) added += (c.post ?? 0n) - (c.pre ?? 0n);
  return supply - added;
}

/** A read whose total is not the supply: kept out of the state, published as a source error. */
export function supplyMismatch(mint: string, slot: number, total: bigint, supply: bigint): VaultstreamError {
  return new VaultstreamError(
    'VALIDATION_FAILED',
    `solana mint ${mint}: the token accounts read at slot ${slot} add up to ${total}, the supply is ${supply}; the read is not used`,
    {
      retryable: true,
      details: { fault: 'SUPPLY_MISMATCH', slot, total: total.toString(), supply: supply.toString() },
    },
  );
}
