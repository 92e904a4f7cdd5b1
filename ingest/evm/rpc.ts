/**
 * The ingester's view of the chain's RPC: `call` and `batch` over the one EVM transport
 * (rpc/evm-transport.ts), which holds the URLs, timeouts, retries and fault
 * classification. Calls go straight to the transport's `request`, which answers the parsed
 * JSON: logs stay raw hex for the ingester's own decoder, and block headers come 100 to a
 * JSON-RPC batch (`batch`). A range the provider refuses is not retried but handed back as
 * a `RANGE_TOO_LARGE` fault for the caller to narrow.
 */

import type { RpcCall } from '../../rpc/evm-batch.ts';
import { type EvmTransportOptions, evmTransport } from '../../rpc/evm-transport.ts';
import {
  type EvmFault,
  EvmRpcFault,
  evmFaultOf,
  type FaultKind,
  faultOf,
  type RangeHint,
  rangeHint,
} from '../../rpc/rpc-faults.ts';

export type { FaultKind, RangeHint, RpcCall };
export { evmFaultOf, faultOf, rangeHint };
/** A failed RPC request (a viem error carrying the fault kind and the project's code). */
export type RpcFault = EvmFault;

export type RpcOptions = Omit<EvmTransportOptions, 'signal'>;

/** True when `err` is (or wraps) a transport fault of kind `kind`. */
export function isFault(err: unknown, kind: FaultKind): boolean {
  return evmFaultOf(err)?.fault === kind;
}

/** A permanent fault found by the ingester in an answer (e.g. a block the node does not hold yet). */
export function rpcFailure(method: string, message: string): RpcFault {
  return new EvmRpcFault({ fault: 'RPC_ERROR', method, url: '', error: { code: -32603, message } });
}

export interface EvmRpc {
  /** One call; throws a transport fault once every attempt failed or the node answered an error. */
  call<T>(method: string, params: unknown[]): Promise<T>;
  /**
   * Several calls in one JSON-RPC batch, answers in call order: members failed with a transient
   * fault are retried alone, a permanent error fails the batch; single calls where batches are refused.
   */
  batch<T>(calls: RpcCall[]): Promise<T[]>;
  /** Milliseconds spent waiting on the network (answers and failures, not backoff), for the bench. */
  readonly waitedMs: number;
  /** JSON-RPC calls sent, by method (each attempt, each item of a batch). */
  readonly calls: ReadonlyMap<string, number>;
  /** HTTP requests sent (each attempt; a batch is one). */
  readonly requests: number;
  /** Milliseconds requests waited for the chain's limits, summed: for a slot, for the pace. */
  readonly limitWaitedMs: { readonly slotMs: number; readonly paceMs: number };
}

/** The ingester's RPC over `opts.urls`. */
export function createEvmRpc(opts: RpcOptions): EvmRpc {
  const { request, value } = evmTransport(opts)({});
  const transport = value as NonNullable<typeof value>;
  return {
    get waitedMs() {
      return transport.waitedMs;
    },
    calls: transport.calls,
    get requests() {
      return transport.requests;
    },
    limitWaitedMs: transport.limitWaitedMs,
    call: <T>(method: string, params: unknown[]) => request({ method, params } as never) as Promise<T>,
    batch: <T>(calls: RpcCall[]) => transport.batch<T>(calls),
  };
}
