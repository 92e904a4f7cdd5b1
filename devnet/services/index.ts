/**
 * The mint flow's HTTP services for the devnet, fed by the simulator: Circle Iris v2
 * `GET /v2/messages/{domain}?transactionHash=`, Predicate v1 `POST /v1/task` and the
 * LayerZero scan `GET /v1/messages/guid/{guid}`, each answering from a published
 * sample (`samples/`, cloned, then filled from what the simulator told it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type JsonRequest, type JsonServer, startJsonServer } from './server.ts';

const SAMPLES = join(import.meta.dirname, 'samples');
const load = (name: string) => JSON.parse(readFileSync(join(SAMPLES, name), 'utf8'));
const IRIS_COMPLETE = load('iris_v2_messages.complete.real-sandbox.json').messages[0];
const IRIS_404 = load('iris_error_404.openapi-example.json');
const TASK_OK = load('v1_task.response.compliant.json');
const TASK_REJECTED = load('v1_task.response.not-compliant.json');
const SCAN_MESSAGE = load('scan_v1_messages_tx.delivered.testnet.json').data[0];

export interface IrisMessage {
  status: 'pending_confirmations' | 'complete';
  /** 0x 32-byte CCTP nonce. */
  nonce: string;
  sourceDomain: number;
  destinationDomain: number;
}

export interface ScanState {
  status: string;
  dstTxHash: string;
}

/** What the simulator tells the services; read on every request. */
export interface ServiceState {
  iris: Map<string, IrisMessage>;
  /** Depositor wallets Predicate rejects. */
  rejected: Set<string>;
  scan: Map<string, ScanState>;
}

export interface DevnetServices {
  state: ServiceState;
  irisUrl: string;
  predicateUrl: string;
  /** LayerZero scan API base (with `/v1`). */
  scanUrl: string;
  stop(): Promise<void>;
}

type Handler = (req: JsonRequest) => { status?: number; body: unknown };

/** Iris v2: messages by source transaction; unknown transactions are 404 as the service answers. */
export function irisHandler(messages: Map<string, IrisMessage>): Handler {
  return (req) => {
    const m = req.path.match(/^\/v2\/messages\/(\d+)$/);
    const msg = messages.get(req.query.get('transactionHash') ?? '');
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
  };
}

/** Predicate v1: compliant unless the `from` is in `rejected`; task ids `${taskPrefix}N`, numbered per request. */
export function predicateHandler(rejected: Set<string>, taskPrefix: string): Handler {
  let tasks = 0;
  return (req) => {
    if (req.method !== 'POST' || req.path !== '/v1/task')
      return { status: 404, body: { error: 'not found' } };
    const from = String((req.body as { from?: string })?.from ?? '');
    const out = structuredClone(rejected.has(from) ? TASK_REJECTED : TASK_OK);
    out.task_id = `${taskPrefix}${++tasks}`;
    return { body: out };
  };
}

/** LayerZero scan: messages by guid; an unseen guid is an empty list, as for recent messages. */
export function scanHandler(messages: Map<string, ScanState>): Handler {
  return (req) => {
    const guid = req.path.match(/^\/v1\/messages\/guid\/(0x[0-9a-f]{64})$/)?.[1];
    const s = guid && messages.get(guid);
    if (!guid || !s) return { body: { data: [] } };
    const out = structuredClone(SCAN_MESSAGE);
    out.guid = guid;
    out.status = {
      name: s.status,
      message: s.status === 'DELIVERED' ? 'Executor transaction confirmed' : 'Ready for DVNs to verify',
    };
    out.destination.tx = s.dstTxHash ? { ...out.destination.tx, txHash: s.dstTxHash } : undefined;
    if (!s.dstTxHash) out.destination.status = 'WAITING';
    return { body: { data: [out] } };
  };
}

export async function startServices(): Promise<DevnetServices> {
  const state: ServiceState = { iris: new Map(), rejected: new Set(), scan: new Map() };
  const servers: JsonServer[] = [];
  const iris = await startJsonServer(irisHandler(state.iris));
  servers.push(iris);
  const predicate = await startJsonServer(predicateHandler(state.rejected, 'devnet-task-'));
  servers.push(predicate);
  const scan = await startJsonServer(scanHandler(state.scan));
  servers.push(scan);
  return {
    state,
    irisUrl: iris.url,
    predicateUrl: predicate.url,
    scanUrl: `${scan.url}/v1`,
    async stop() {
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}
