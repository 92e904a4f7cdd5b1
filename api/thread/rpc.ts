/**
 * A small request/answer protocol over a MessagePort, used between the main thread and the API's
 * thread (api/thread/host.ts, api/thread/worker.ts): either side calls a named method of the
 * other with structured-cloneable arguments and gets its result or its error back, or sends a
 * notification that has no answer. A call can be cancelled with an AbortSignal: the other side's
 * handler is given a signal that aborts with it.
 *
 * Errors cross as plain objects (`SentError`) and are rebuilt on arrival with their own fields
 * (`code`, `port`, `retryable`...) and causes, so the API's error mapping (api/http/errors.ts)
 * and the CLI's (core/errors.ts describeError) read them as they read a local error; a
 * `VaultstreamError` comes back as one.
 */
import type { MessagePort } from 'node:worker_threads';
import { type ErrorCode, VaultstreamError } from '../../core/errors.ts';

/** Handles one method: its arguments and a signal aborted when the caller cancels. */
export type Handler = (args: unknown[], signal: AbortSignal) => unknown;

type Message =
  | { t: 'call'; id: number; m: string; a: unknown[] }
  | { t: 'cancel'; id: number }
  | { t: 'ok'; id: number; v: unknown }
  | { t: 'err'; id: number; e: SentError }
  | { t: 'note'; m: string; a: unknown[] };

/** An error as it crosses the port: its name, message, stack, plain own fields and cause. */
interface SentError {
  name: string;
  message: string;
  stack?: string;
  fields: Record<string, unknown>;
  cause?: SentError;
}

const PLAIN = new Set(['string', 'number', 'boolean', 'bigint']);

function sendable(err: unknown, depth = 0): SentError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    if (k === 'cause') continue;
    if (v === null || PLAIN.has(typeof v)) fields[k] = v;
    else if (k === 'details')
      try {
        fields[k] = structuredClone(v);
      } catch {}
  }
  const cause = (err as { cause?: unknown }).cause;
  return {
    name: err.name,
    message: err.message,
    stack: err.stack,
    fields,
    cause: cause !== undefined && depth < 8 ? sendable(cause, depth + 1) : undefined,
  };
}

function rebuilt(e: SentError): Error {
  const cause = e.cause ? rebuilt(e.cause) : undefined;
  const err =
    e.name === 'VaultstreamError'
      ? new VaultstreamError(e.fields.code as ErrorCode, e.message, {
          cause,
          retryable: e.fields.retryable as boolean | undefined,
          details: e.fields.details as Record<string, unknown> | undefined,
          hint: e.fields.hint as string | undefined,
        })
      : Object.assign(new Error(e.message, cause ? { cause } : undefined), e.fields);
  if (e.name !== 'VaultstreamError' && e.name !== 'Error') err.name = e.name;
  if (e.stack) err.stack = e.stack;
  return err;
}

/** One side of the port: calls the other side's methods and serves its own `handlers`. */
export class Peer {
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly serving = new Map<number, AbortController>();
  private readonly notes = new Map<string, (...args: unknown[]) => void>();
  private closed = false;

  constructor(
    private readonly port: MessagePort,
    private readonly handlers: Record<string, Handler> = {},
  ) {
    port.on('message', (msg: Message) => this.receive(msg));
  }

  /** Calls `method` on the other side; `signal` cancels it there. */
  call<T>(method: string, args: unknown[] = [], signal?: AbortSignal): Promise<T> {
    if (this.closed) return Promise.reject(new VaultstreamError('INTERNAL', 'the API thread is stopped'));
    signal?.throwIfAborted();
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => this.port.postMessage({ t: 'cancel', id } satisfies Message);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.set(id, {
        resolve: (v) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(v as T);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      this.port.postMessage({ t: 'call', id, m: method, a: args } satisfies Message);
    });
  }

  /** Sends a notification (no answer) to the other side's `onNote(method)` listener. */
  notify(method: string, ...args: unknown[]): void {
    if (!this.closed) this.port.postMessage({ t: 'note', m: method, a: args } satisfies Message);
  }

  /** Listens to the other side's notifications named `method`. */
  onNote(method: string, fn: (...args: unknown[]) => void): void {
    this.notes.set(method, fn);
  }

  /** Fails the calls still waiting (the other side is gone) and stops listening. */
  close(): void {
    this.closed = true;
    for (const w of this.waiting.values())
      w.reject(new VaultstreamError('INTERNAL', 'the API thread is stopped'));
    this.waiting.clear();
    this.port.close();
  }

  private receive(msg: Message): void {
    switch (msg.t) {
      case 'call':
        void this.serve(msg.id, msg.m, msg.a);
        return;
      case 'cancel':
        this.serving.get(msg.id)?.abort();
        return;
      case 'ok':
      case 'err': {
        const w = this.waiting.get(msg.id);
        this.waiting.delete(msg.id);
        if (msg.t === 'ok') w?.resolve(msg.v);
        else w?.reject(rebuilt(msg.e));
        return;
      }
      case 'note':
        this.notes.get(msg.m)?.(...msg.a);
        return;
    }
  }

  private async serve(id: number, method: string, args: unknown[]): Promise<void> {
    const abort = new AbortController();
    this.serving.set(id, abort);
    try {
      const handler = this.handlers[method];
      if (!handler)
        throw new VaultstreamError('INTERNAL', `no method ${method} on this side of the API thread`);
      const v = await handler(args, abort.signal);
      if (!this.closed) this.port.postMessage({ t: 'ok', id, v } satisfies Message);
    } catch (err) {
      if (!this.closed) this.port.postMessage({ t: 'err', id, e: sendable(err) } satisfies Message);
    } finally {
      this.serving.delete(id);
    }
  }
}

/** A Buffer over the bytes of a Uint8Array that crossed the port (a Buffer arrives as a plain Uint8Array). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
