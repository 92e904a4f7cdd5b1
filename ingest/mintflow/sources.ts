/**
 * What the tracker reads, one small interface per source, so tests can run it
 * against stand-ins and a real anvil. The HTTP implementations are in
 * `attestation.ts`, `compliance.ts`, `scan.ts`; the primary chain's in `primary.ts`.
 */
import type { ParsedTransaction, SignatureInfo } from '../solana/types.ts';

/** Circle Iris v2 view of the burn. */
export type Attestation =
  | { status: 'not_found' }
  | {
      status: 'pending_confirmations' | 'complete';
      /** 0x 32-byte CCTP V2 nonce ('' while Iris has none). */
      nonce: string;
      sourceDomain: number;
      destinationDomain: number;
    };

export interface AttestationSource {
  /** `GET /v2/messages/{sourceDomain}?transactionHash=` */
  byTransaction(sourceDomain: number, txHash: string): Promise<Attestation>;
}

export interface ComplianceSource {
  /** The compliance verdict on the depositor's relay. */
  check(req: { from: string; to: string; chainId: number }): Promise<{ compliant: boolean; taskId: string }>;
}

/** The relay transaction on the primary chain and what it did. */
export interface RelayOutcome {
  kind: 'relayed' | 'failed';
  txHash: string;
  blockNumber: string;
  blockTimestamp: number;
  gasUsed: string;
  /** Composer `Deposited` in the same transaction. */
  deposited?: { assetAmount: string; shareAmount: string };
  /** Share OFT `OFTSent` in the same transaction. */
  oftSent?: { guid: string; dstEid: number; amountSent: string; amountReceived: string };
}

export interface PrimaryChainSource {
  /** The relayer's outcome for the CCTP `nonce` (HookRelayed / HookFailed), undefined while none. */
  relay(nonce: string): Promise<RelayOutcome | undefined>;
  /** The relayer's `Refunded(nonce)`, undefined while none. */
  refund(nonce: string): Promise<{ txHash: string; blockTimestamp: number } | undefined>;
}

/** LayerZero scan's view of a message. */
export interface ScanMessage {
  /** `status.name`: INFLIGHT, CONFIRMING, DELIVERED, FAILED, BLOCKED, ... */
  status: string;
  message: string;
  /** Destination transaction (the Solana signature of the OFT receive), '' before delivery. */
  dstTxHash: string;
}

export interface CrossChainScanSource {
  /** `GET /messages/guid/{guid}`; undefined while the scan has not seen it. */
  byGuid(guid: string): Promise<ScanMessage | undefined>;
}

export interface SolanaSource {
  getTransaction(signature: string): Promise<ParsedTransaction | null>;
  /** Every signature newer than `until`, newest first; without `until`, only the newest. */
  signaturesFor(address: string, until?: string): Promise<SignatureInfo[]>;
}

export interface MintFlowSources {
  solana: SolanaSource;
  attestation: AttestationSource;
  compliance: ComplianceSource;
  primary: PrimaryChainSource;
  scan: CrossChainScanSource;
}
