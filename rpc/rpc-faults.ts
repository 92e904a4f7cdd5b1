/**
 * The fault model of the service's JSON-RPC clients (rpc/evm-transport.ts, which EVM readers and
 * the Solana client share): the fault kinds and the project error code of each, the error types
 * (viem's, carrying the kind), the classification of a JSON-RPC error answered, and what a
 * provider's eth_getLogs refusal says would work (`rangeHint`).
 */
import { HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import type { ErrorCode } from '../core/errors.ts';

/** What went wrong with an RPC request; also the `code` of the ingester's `source_errors` events. */
export type FaultKind =
  | 'TIMEOUT'
  | 'RATE_LIMITED'
  | 'HTTP_ERROR'
  | 'NETWORK'
  | 'RPC_ERROR'
  | 'RANGE_TOO_LARGE';

const ERROR_CODE: Record<FaultKind, ErrorCode> = {
  TIMEOUT: 'TIMEOUT',
  RATE_LIMITED: 'RPC_RATE_LIMITED',
  HTTP_ERROR: 'RPC_UNAVAILABLE',
  NETWORK: 'RPC_UNAVAILABLE',
  RPC_ERROR: 'RPC_ERROR',
  RANGE_TOO_LARGE: 'RPC_RANGE_TOO_LARGE',
};
const RETRYABLE: ReadonlySet<FaultKind> = new Set(['TIMEOUT', 'RATE_LIMITED', 'HTTP_ERROR', 'NETWORK']);

/** What every transport error carries besides viem's fields. */
export interface EvmFault extends Error {
  readonly fault: FaultKind;
  /** The project's error code. */
  readonly errorCode: ErrorCode;
  readonly retryable: boolean;
  /** The JSON-RPC method (`batch:<method>` for a batch). */
  readonly method: string;
  readonly url: string;
  /** The wait the server asked for (HTTP Retry-After). */
  readonly retryAfterMs?: number;
  /** viem's one-line summary and details. */
  readonly shortMessage: string;
  readonly details: string;
}

interface FaultFields {
  fault: FaultKind;
  method: string;
  url: string;
  retryAfterMs?: number;
}

function mark(e: EvmFault, f: FaultFields): void {
  Object.assign(e, {
    fault: f.fault,
    errorCode: ERROR_CODE[f.fault],
    retryable: RETRYABLE.has(f.fault),
    method: f.method,
    url: f.url,
    retryAfterMs: f.retryAfterMs,
  });
}

/** The node could not be reached or answered an HTTP error (or not JSON). */
export class EvmHttpFault extends HttpRequestError implements EvmFault {
  declare readonly fault: FaultKind;
  declare readonly errorCode: ErrorCode;
  declare readonly retryable: boolean;
  declare readonly method: string;
  declare readonly retryAfterMs?: number;
  constructor(f: FaultFields & { details: string; status?: number; cause?: Error }) {
    // The cause is attached after: given to viem's constructor, its message would replace `details`.
    super({ url: f.url, status: f.status, details: f.details });
    if (f.cause) Object.defineProperty(this, 'cause', { value: f.cause, writable: true, configurable: true });
    this.name = 'EvmHttpFault';
    mark(this, f);
  }
}

/** No answer within the per-request timeout. */
export class EvmTimeoutFault extends TimeoutError implements EvmFault {
  declare readonly fault: FaultKind;
  declare readonly errorCode: ErrorCode;
  declare readonly retryable: boolean;
  declare readonly method: string;
  constructor(f: Omit<FaultFields, 'fault'> & { timeoutMs: number; cause?: Error }) {
    super({ url: f.url, body: { method: f.method, timeoutMs: f.timeoutMs } });
    this.name = 'EvmTimeoutFault';
    if (f.cause) Object.defineProperty(this, 'cause', { value: f.cause, writable: true, configurable: true });
    mark(this, { ...f, fault: 'TIMEOUT' });
  }
}

/** A JSON-RPC error answered by the node (or an answer that breaks the protocol). */
export class EvmRpcFault extends RpcRequestError implements EvmFault {
  declare readonly fault: FaultKind;
  declare readonly errorCode: ErrorCode;
  declare readonly retryable: boolean;
  declare readonly method: string;
  constructor(f: FaultFields & { error: { code: number; message: string; data?: unknown } }) {
    super({ url: f.url, body: { method: f.method }, error: f.error });
    this.name = 'EvmRpcFault';
    mark(this, f);
  }
}

/** The transport fault in `err`'s cause chain (viem wraps RPC errors in its own types). */
export function evmFaultOf(err: unknown): EvmFault | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    if (e instanceof EvmHttpFault || e instanceof EvmTimeoutFault || e instanceof EvmRpcFault) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The fault kind of any error (`NETWORK` when no transport fault is in its cause chain). */
export function faultOf(err: unknown): FaultKind {
  return evmFaultOf(err)?.fault ?? 'NETWORK';
}

/** A transport fault's one-line text (viem's full message spans several lines). */
export function faultSummary(err: unknown): string {
  const f = evmFaultOf(err);
  if (!f) return err instanceof Error ? err.message : String(err);
  return `${f.shortMessage} ${f.details}`.trim();
}

// Providers word "your eth_getLogs asks too much" in many ways; this is the one place that reads them.
const RANGE_WORDS =
  /block range|range (is )?too (large|wide|big)|too many (results|logs|blocks)|more than \d+ (results|logs)|response size|limit exceeded|exceeds? (the )?(max|limit)|query timeout exceeded/i;

/**
 * Classifies a JSON-RPC error answered to `method`. Only an `eth_getLogs` refusal is a range
 * error (for the caller to narrow); -32005 ("limit exceeded") on any other method is a rate
 * limit, retried with backoff.
 */
export function rpcAnswerFault(
  error: { code?: number; message?: string; data?: unknown },
  method: string,
  url = '',
): EvmRpcFault {
  const code = typeof error.code === 'number' ? error.code : -32603;
  const text = error.message ?? '';
  const e = { code, message: `rpc error ${error.code ?? '?'}: ${text}`, data: error.data };
  let fault: FaultKind = 'RPC_ERROR';
  if (method === 'eth_getLogs' && (RANGE_WORDS.test(text) || code === -32005)) fault = 'RANGE_TOO_LARGE';
  else if (code === 429 || code === -32005 || /rate limit|too many requests/i.test(text))
    fault = 'RATE_LIMITED';
  return new EvmRpcFault({ fault, method, url, error: e });
}

/**
 * What a provider's `eth_getLogs` refusal says would work, read from its error (message and data):
 * - `to`: the last block of a range from the same first block that would work (Alchemy: "this
 *   block range should work: [0x.., 0x..]"; Infura's -32005 "query returned more than 10000
 *   results" carries `data: { from, to }`; others "Try with this block range [0x.., 0x..]");
 * - `span`: the widest range the provider accepts at all ("up to a 500 block range", "range
 *   1000000 exceeds limit of 10000", "max block range = 5000", "exceeds max block range 5000").
 * `countLimited` says the refusal is about the answer's size (too many logs), not the range's width:
 * its suggestion fits this stretch of the chain, not every stretch.
 */
export interface RangeHint {
  to?: number;
  span?: number;
  countLimited: boolean;
}

const SUGGESTED_PAIR = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i;
const SPAN_LIMIT =
  /(?:up to an? |limit of |max(?:imum)? block range(?: is| =|:)? ?|block range (?:limit|is) )(\d[\d,]*)(k?)/i;
const COUNT_WORDS = /results|logs in the response|response size|too many logs|cap of/i;

/** The range hint in a range refusal (see `RangeHint`), or undefined when it names none. */
export function rangeHint(err: unknown, from: number): RangeHint | undefined {
  const f = evmFaultOf(err) as (EvmFault & { data?: unknown; cause?: unknown }) | undefined;
  if (f?.fault !== 'RANGE_TOO_LARGE') return undefined;
  const text = `${f.details ?? ''} ${f.shortMessage ?? ''}`;
  const countLimited = COUNT_WORDS.test(text) && !/exceeds limit of|max(?:imum)? block range/i.test(text);
  const data = (f as { data?: { from?: unknown; to?: unknown } }).data;
  const pair = SUGGESTED_PAIR.exec(text);
  let to: number | undefined;
  if (pair && Number(pair[1]) === from) to = Number(pair[2]);
  else if (pair) to = from + Number(pair[2]) - Number(pair[1]);
  else if (data && typeof data === 'object' && data.to !== undefined && data.from !== undefined)
    to = from + Number(data.to) - Number(data.from);
  const limit = SPAN_LIMIT.exec(text);
  // Alchemy's size refusal also says "up to a 2K block range": that is no limit on a sparse stretch.
  const span =
    limit && !countLimited ? Number(limit[1].replace(/,/g, '')) * (limit[2] ? 1000 : 1) : undefined;
  if ((to === undefined || !(to >= from)) && !(span && span > 0)) return undefined;
  return {
    ...(to !== undefined && to >= from ? { to } : {}),
    ...(span ? { span } : {}),
    countLimited,
  };
}
