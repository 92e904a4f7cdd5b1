/**
 * Stand-ins for the HTTP services of the mint flow, each answering from the
 * published samples in test/fixtures/solana/ (cloned, then filled from its state):
 * Circle Iris v2 `GET /v2/messages/{domain}?transactionHash=`, Predicate v1
 * `POST /v1/task`, LayerZero scan `GET /v1/messages/guid/{guid}`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Standin, startStandin } from './server.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures/solana');
const load = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const IRIS_COMPLETE = load('iris_v2_messages.complete.real-sandbox.json').messages[0];
const IRIS_404 = load('iris_error_404.openapi-example.json');
const TASK_OK = load('v1_task.response.compliant.json');
const TASK_REJECTED = load('v1_task.response.not-compliant.json');
const SCAN_MESSAGE = load('scan_v1_messages_tx.delivered.testnet.json').data[0];

export interface IrisMessage {
  status: 'pending_confirmations' | 'complete';
  nonce: string;
  sourceDomain: number;
  destinationDomain: number;
}

/** Iris v2: messages by source transaction; unknown transactions are 404 as the service answers. */
export async function startIris(): Promise<Standin & { messages: Map<string, IrisMessage> }> {
  const messages = new Map<string, IrisMessage>();
  const s = await startStandin((req) => {
    const m = req.path.match(/^\/v2\/messages\/(\d+)$/);
    const tx = req.query.get('transactionHash') ?? '';
    const msg = messages.get(tx);
    if (!m || !msg || Number(m[1]) !== msg.sourceDomain) return { status: 404, body: IRIS_404 };
    const out = structuredClone(IRIS_COMPLETE);
    const pending = msg.status !== 'complete';
    Object.assign(out, {
      status: msg.status,
      eventNonce: msg.nonce,
      // The OpenAPI schema: "PENDING" / "0x" while the attestation is not available.
      attestation: pending ? 'PENDING' : out.attestation,
      message: pending ? '0x' : out.message,
    });
    Object.assign(out.decodedMessage, {
      nonce: msg.nonce,
      sourceDomain: String(msg.sourceDomain),
      destinationDomain: String(msg.destinationDomain),
    });
    return { body: { messages: [out] } };
  });
  return Object.assign(s, { messages });
}

/** Predicate v1: compliant unless the `from` is in `rejected`; task ids numbered per request. */
export async function startPredicate(): Promise<Standin & { rejected: Set<string> }> {
  const rejected = new Set<string>();
  let n = 0;
  const s = await startStandin((req) => {
    if (req.method !== 'POST' || req.path !== '/v1/task')
      return { status: 404, body: { error: 'not found' } };
    const from = String((req.body as { from?: string })?.from ?? '');
    const out = structuredClone(rejected.has(from) ? TASK_REJECTED : TASK_OK);
    out.task_id = `task-${++n}`;
    return { body: out };
  });
  return Object.assign(s, { rejected });
}

export interface ScanState {
  status: string;
  dstTxHash: string;
}

/** LayerZero scan: messages by guid; an unseen guid is an empty list, as for recent messages. */
export async function startScan(): Promise<Standin & { messages: Map<string, ScanState> }> {
  const messages = new Map<string, ScanState>();
  const s = await startStandin((req) => {
    const guid = req.path.match(/^\/v1\/messages\/guid\/(0x[0-9a-f]{64})$/)?.[1];
    const state = guid && messages.get(guid);
    if (!guid || !state) return { body: { data: [] } };
    const out = structuredClone(SCAN_MESSAGE);
    out.guid = guid;
    out.status = {
      name: state.status,
      message: state.status === 'DELIVERED' ? 'Executor transaction confirmed' : 'Ready for DVNs to verify',
    };
    out.destination.tx = state.dstTxHash ? { ...out.destination.tx, txHash: state.dstTxHash } : undefined;
    if (!state.dstTxHash) out.destination.status = 'WAITING';
    return { body: { data: [out] } };
  });
  return Object.assign(s, { messages });
}
