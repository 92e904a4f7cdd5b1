/**
 * The HTTP services of the flow in their documented shapes: Circle Iris v2
 * messages, Predicate v1 task, LayerZero scan messages by guid, and the Solana
 * JSON-RPC reads. A 404 from Iris or the scan means "not seen yet", not a fault.
 */
import type { Config } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { createRpc, fetchJson, type SolanaRpc } from '../solana/rpc.ts';
import { signaturesSince } from '../solana/signatures.ts';
import type { ParsedTransaction, SignatureInfo } from '../solana/types.ts';
import type {
  Attestation,
  AttestationSource,
  ComplianceSource,
  CrossChainScanSource,
  ScanMessage,
  SolanaSource,
} from './sources.ts';

const trim = (u: string) => u.replace(/\/+$/, '');

/** A v2 nonce as 0x 32-byte hex: Iris answers hex (real) or decimal (its OpenAPI example). */
export function nonceHex(n: string | null | undefined): string {
  if (!n) return '';
  return `0x${BigInt(n).toString(16).padStart(64, '0')}`;
}

function httpFault(url: string, status: number, body: unknown): VaultstreamError {
  // An answer the service's documentation does not describe: retried on the next poll.
  return new VaultstreamError(
    'INTERNAL',
    `${url}: HTTP ${status} ${JSON.stringify(body ?? '').slice(0, 200)}`,
    {
      details: { httpStatus: status },
      retryable: true,
    },
  );
}

/** Circle Iris v2 messages of a burn transaction. */
export function irisSource(
  baseUrl: string,
  timeoutMs: number,
  doFetch: typeof fetch = fetch,
): AttestationSource {
  return {
    async byTransaction(sourceDomain, txHash): Promise<Attestation> {
      const url = `${trim(baseUrl)}/v2/messages/${sourceDomain}?transactionHash=${encodeURIComponent(txHash)}`;
      const { status, body } = await fetchJson(doFetch, url, {}, timeoutMs);
      if (status === 404) return { status: 'not_found' };
      if (status !== 200) throw httpFault(url, status, body);
      const m = (body as { messages?: Record<string, any>[] })?.messages?.[0];
      if (!m) return { status: 'not_found' };
      const decoded = m.decodedMessage ?? {};
      return {
        status: m.status === 'complete' ? 'complete' : 'pending_confirmations',
        nonce: nonceHex(m.eventNonce ?? decoded.nonce),
        sourceDomain: Number(decoded.sourceDomain ?? sourceDomain),
        destinationDomain: Number(decoded.destinationDomain ?? -1),
      };
    },
  };
}

/** Predicate v1 `POST /v1/task` verdict (header `x-api-key` when configured). */
export function predicateSource(
  baseUrl: string,
  apiKey: string,
  timeoutMs: number,
  doFetch: typeof fetch = fetch,
): ComplianceSource {
  return {
    async check({ from, to, chainId }) {
      const url = `${trim(baseUrl)}/v1/task`;
      const { status, body } = await fetchJson(
        doFetch,
        url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) },
          body: JSON.stringify({ from, to, data: '0x', msg_value: '0', chain_id: chainId }),
        },
        timeoutMs,
      );
      if (status !== 200) throw httpFault(url, status, body);
      const r = body as { is_compliant?: boolean; task_id?: string };
      return { compliant: r.is_compliant === true, taskId: r.task_id ?? '' };
    },
  };
}

/** LayerZero scan `GET /messages/guid/{guid}`. */
export function layerZeroScanSource(
  baseUrl: string,
  timeoutMs: number,
  doFetch: typeof fetch = fetch,
): CrossChainScanSource {
  return {
    async byGuid(guid): Promise<ScanMessage | undefined> {
      const url = `${trim(baseUrl)}/messages/guid/${guid}`;
      const { status, body } = await fetchJson(doFetch, url, {}, timeoutMs);
      if (status === 404) return undefined;
      if (status !== 200) throw httpFault(url, status, body);
      const m = (body as { data?: Record<string, any>[] })?.data?.[0];
      if (!m) return undefined;
      return {
        status: String(m.status?.name ?? ''),
        message: String(m.status?.message ?? ''),
        dstTxHash: String(m.destination?.tx?.txHash ?? ''),
      };
    },
  };
}

/** Solana reads of the tracker over the JSON-RPC client. */
export function solanaRpcSource(rpc: SolanaRpc, commitment: string, limit: number): SolanaSource {
  return {
    getTransaction: (signature) =>
      rpc.call<ParsedTransaction | null>('getTransaction', [
        signature,
        { commitment, encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 },
      ]),
    signaturesFor: (address, until) =>
      until
        ? signaturesSince(rpc, address, { until, commitment, limit })
        : rpc.call<SignatureInfo[]>('getSignaturesForAddress', [address, { commitment, limit: 1 }]),
  };
}

/** The Solana reads from the `solana` settings. */
export function solanaSourceFromConfig(config: Config): SolanaSource {
  const rpc = createRpc({
    urls: config.solana.rpcUrls,
    timeoutMs: config.solana.requestTimeoutMs,
    maxAttempts: config.solana.maxAttempts,
    backoffMs: config.solana.backoffMs,
    maxBackoffMs: config.solana.maxBackoffMs,
    jitter: config.solana.jitter,
  });
  return solanaRpcSource(rpc, config.solana.commitment, config.solana.pageLimit);
}

/** The HTTP services from the `mintFlow` settings. */
export function httpSources(config: Config) {
  const t = config.mintFlow.requestTimeoutMs;
  return {
    attestation: irisSource(config.mintFlow.attestationUrl, t),
    compliance: predicateSource(config.mintFlow.complianceUrl, config.mintFlow.complianceApiKey, t),
    scan: layerZeroScanSource(config.mintFlow.crossChainScanUrl, t),
  };
}
