/** `getSignaturesForAddress` paged back with `before` until `until` (or `stop`) is reached. */
import type { SolanaRpc } from './rpc.ts';
import type { SignatureInfo } from './types.ts';

export interface SignaturePaging {
  /** Exclusive lower bound: the newest signature already handled. */
  until?: string;
  commitment: string;
  /** Signatures per page (at most 1000). */
  limit: number;
  /** Stops at the first signature for which this is true (it is left out). */
  stop?: (s: SignatureInfo) => boolean;
  /** Stops once this many are found (more may be returned: the last page is kept whole). */
  max?: number;
}

/** Every signature of `address` newer than `until`, newest first. */
export async function signaturesSince(
  rpc: SolanaRpc,
  address: string,
  p: SignaturePaging,
): Promise<SignatureInfo[]> {
  const found: SignatureInfo[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await rpc.call<SignatureInfo[]>('getSignaturesForAddress', [
      address,
      {
        commitment: p.commitment,
        limit: p.limit,
        ...(p.until ? { until: p.until } : {}),
        ...(before ? { before } : {}),
      },
    ]);
    const cut = p.stop ? page.findIndex(p.stop) : -1;
    found.push(...(cut < 0 ? page : page.slice(0, cut)));
    if (cut >= 0 || page.length < p.limit || found.length >= (p.max ?? Number.POSITIVE_INFINITY))
      return found;
    before = page[page.length - 1].signature;
  }
}
