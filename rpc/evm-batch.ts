/**
 * JSON-RPC batches over the EVM transport (rpc/evm-transport.ts `value.batch`: the ingester's
 * block headers and day-close reads): the members a provider fails one by one (a rate limit, or
 * left out of the answer) are retried alone, with the transport's backoff and attempts; a batch
 * answered HTTP 413 (too large) is sent again in halves (halved again while refused), and later
 * batches are cut to that size; a batch refused as over the provider's rate `maxAttempts` times is
 * sent again in halves too (that once); a provider that refuses batches (an error object instead
 * of an array, or HTTP 4xx other than 408, 413 and 429) gets single calls from then on.
 */
import { type EvmFault, EvmHttpFault, evmFaultOf, rpcAnswerFault } from './rpc-faults.ts';

/** One JSON-RPC call. */
export interface RpcCall {
  method: string;
  params: unknown[];
}

/** The provider does not take JSON-RPC batches: not a fault (never retried), the batch goes as single calls. */
export class BatchRefused extends Error {}

type Answer = { id?: number; result?: unknown; error?: { code?: number; message?: string; data?: unknown } };

/** `a` as one JSON-RPC answer object, or a fault. */
export function single(a: unknown, method: string, url: string): Answer {
  if (!a || typeof a !== 'object' || Array.isArray(a))
    throw rpcAnswerFault({ code: -32603, message: 'malformed JSON-RPC answer' }, method, url);
  return a as Answer;
}

/** The HTTP status of a failed request's fault, if it got an answer. */
const statusOf = (e: unknown) => (evmFaultOf(e) as { status?: number } | undefined)?.status;

/** What a batch needs of its transport. */
export interface BatchTransport {
  /**
   * Sends `body()` with the transport's retries over its URLs; `read` turns the answer into the
   * result or throws; `refused` says the request's form is not taken (thrown as `BatchRefused`);
   * `stop` ends the attempts at a failure (thrown as it is).
   */
  send<T>(
    method: string,
    body: () => unknown,
    read: (answer: unknown, url: string) => T,
    refused?: (e: unknown) => boolean,
    stop?: (e: unknown) => boolean,
  ): Promise<T>;
  /** One call alone, with its retries. */
  request(call: RpcCall): Promise<unknown>;
  /** Reserves `n` consecutive JSON-RPC ids; returns the first. */
  ids(n: number): number;
  maxAttempts: number;
}

/** The batch sender of one transport (what it learns of the provider, batches refused or too large, is kept). */
export function batchSender(t: BatchTransport): <T>(list: RpcCall[]) => Promise<T[]> {
  /** Set once the provider refused a batch: single calls from then on. */
  let batchesRefused = false;
  /** Most members a batch holds: half of the smallest batch answered HTTP 413 (too large). */
  let maxBatch = Number.POSITIVE_INFINITY;

  /**
   * One batch, its members retried alone while they fail with a transient fault (see the module
   * comment); a refused batch becomes single calls, and so does every later one.
   */
  async function batch<T>(list: RpcCall[]): Promise<T[]> {
    if (batchesRefused) return Promise.all(list.map((c) => t.request(c) as Promise<T>));
    if (list.length > maxBatch) {
      const parts: RpcCall[][] = [];
      for (let at = 0; at < list.length; at += maxBatch) parts.push(list.slice(at, at + maxBatch));
      return (await Promise.all(parts.map((p) => batch<T>(p)))).flat();
    }
    const first = t.ids(list.length);
    const method = list[0].method;
    const out = new Array<T>(list.length);
    /** Positions of the members not answered yet. */
    let owed = list.map((_, k) => k);
    const members = () =>
      owed.map((k) => ({ jsonrpc: '2.0', id: first + k, method: list[k].method, params: list[k].params }));
    const read = (answer: unknown, url: string) => {
      if (!Array.isArray(answer)) {
        // A transient error answered for the whole request is retried; any other says "no batches".
        const f = rpcAnswerFault(
          single(answer, method, url).error ?? { message: 'not a batch answer' },
          method,
          url,
        );
        throw f.retryable ? f : new BatchRefused(`${url} answered a batch with ${f.details}`, { cause: f });
      }
      const wanted = new Set(owed);
      const failed: EvmFault[] = [];
      for (const item of answer) {
        const a = single(item, method, url);
        const k = (a.id ?? -1) - first;
        if (!wanted.delete(k))
          throw rpcAnswerFault({ message: `unexpected id ${a.id} in a batch answer` }, method, url);
        if (a.error) {
          wanted.add(k);
          failed.push(rpcAnswerFault(a.error, list[k].method, url));
        } else out[k] = a.result as T;
      }
      owed = [...wanted].sort((a, b) => a - b);
      if (!owed.length) return;
      throw (
        failed.find((f) => !f.retryable) ??
        failed[0] ??
        new EvmHttpFault({
          method,
          url,
          fault: 'HTTP_ERROR',
          details: `a batch answer from ${url} left out ${owed.length} of its members`,
        })
      );
    };
    // HTTP 4xx but 408 (timeout), 413 (too large: a smaller batch is taken) and 429 (rate
    // limit): the provider does not take this request's form.
    const refused = (e: unknown) => {
      const status = statusOf(e) ?? 0;
      return status >= 400 && status < 500 && ![408, 413, 429].includes(status);
    };
    // Refused as over the provider's rate `maxAttempts` times: perhaps more calls than
    // its budget lets through at once (a budget of 40 calls a second never takes 100 in one
    // request). The members owed go again in two halves (halved again while refused).
    let limited = 0;
    let split = false;
    const overBudget = (e: unknown) => {
      if (evmFaultOf(e)?.fault === 'RATE_LIMITED' && ++limited >= t.maxAttempts && owed.length > 1)
        split = true;
      return split;
    };
    try {
      await t.send(`batch:${method}`, members, read, refused, overBudget);
    } catch (e) {
      // The members owed go again: in two halves when over the rate, within the smaller size when
      // too large (a lone member as a single call), as single calls when batches are refused.
      const again = owed.map((k) => list[k]);
      let answers: T[];
      if (split) {
        const half = Math.ceil(again.length / 2);
        answers = (await Promise.all([batch<T>(again.slice(0, half)), batch<T>(again.slice(half))])).flat();
      } else if (statusOf(e) === 413) {
        // Too large: no later batch holds more than half of it.
        maxBatch = Math.min(maxBatch, Math.ceil(owed.length / 2));
        answers = again.length > 1 ? await batch<T>(again) : [(await t.request(again[0])) as T];
      } else if (e instanceof BatchRefused) {
        batchesRefused = true;
        answers = await Promise.all(again.map((c) => t.request(c) as Promise<T>));
      } else throw e;
      owed.forEach((k, j) => {
        out[k] = answers[j];
      });
    }
    return out;
  }

  return batch;
}
