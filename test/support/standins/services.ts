/**
 * Stand-ins for the HTTP services of the mint flow, with the devnet's handlers
 * (devnet/services/index.ts: the published samples, cloned, then filled from the
 * stand-in's state) behind a test stand-in server (requests recorded, faults):
 * Circle Iris v2 `GET /v2/messages/{domain}?transactionHash=`, Predicate v1
 * `POST /v1/task`, LayerZero scan `GET /v1/messages/guid/{guid}`.
 */
import {
  type IrisMessage,
  irisHandler,
  predicateHandler,
  type ScanState,
  scanHandler,
} from '../../../devnet/services/index.ts';
import { type Standin, startStandin } from './server.ts';

export type { IrisMessage, ScanState };

/** Iris v2: messages by source transaction; unknown transactions are 404 as the service answers. */
export async function startIris(): Promise<Standin & { messages: Map<string, IrisMessage> }> {
  const messages = new Map<string, IrisMessage>();
  return Object.assign(await startStandin(irisHandler(messages)), { messages });
}

/** Predicate v1: compliant unless the `from` is in `rejected`; task ids `task-N`, numbered per request. */
export async function startPredicate(): Promise<Standin & { rejected: Set<string> }> {
  const rejected = new Set<string>();
  return Object.assign(await startStandin(predicateHandler(rejected, 'task-')), { rejected });
}

/** LayerZero scan: messages by guid; an unseen guid is an empty list, as for recent messages. */
export async function startScan(): Promise<Standin & { messages: Map<string, ScanState> }> {
  const messages = new Map<string, ScanState>();
  return Object.assign(await startStandin(scanHandler(messages)), { messages });
}
