/**
 * A websocket `programSubscribe` to the mint's token accounts (the same filters and slice as the
 * full read): the node pushes every account whose data changed, whatever the transaction that
 * changed it, including a plain SPL `Transfer`, which does not list the mint and so is missing
 * from the mint's signatures. The follower takes the notices as hints (which accounts changed, at
 * which slot) and reads the transactions behind them; the notices only wake it and name accounts.
 *
 * A subscription that was up and drops, or more notices than `maxBuffered` waiting, is a `gap`:
 * what changed meanwhile is unknown, so the follower re-reads every account. A provider without
 * websockets never comes up; the follower then re-reads on its fallback interval.
 */
import WebSocket from 'ws';
import type { Logger } from '../../core/log.ts';
import { accountOf, accountSelection, type ReadAccount, type WireAccount } from './accounts.ts';

/** One account as a notice gave it. */
export interface AccountNotice extends ReadAccount {
  slot: number;
}

export interface SubscriptionOptions {
  url: string;
  mint: string;
  program: string;
  commitment: string;
  /** Waits this long for the subscription to be confirmed. */
  timeoutMs: number;
  /** Notices held at most before the gap is declared. */
  maxBuffered: number;
  /** Reconnect delay after a drop (doubling, at most a minute). */
  retryMs: number;
  log?: Logger;
}

/** Ping interval of the subscription's connection. */
const HEARTBEAT_MS = 30_000;

export class AccountSubscription {
  private ws?: WebSocket;
  private readonly notices = new Map<string, AccountNotice>();
  private wakers: (() => void)[] = [];
  private retry: number;
  private closed = false;
  private timer?: NodeJS.Timeout;
  /** Confirmed by the node and connected. */
  up = false;
  /** Changes may have been missed since the state was last read in full. */
  gap = false;

  constructor(private readonly opts: SubscriptionOptions) {
    this.retry = opts.retryMs;
  }

  /** Connects; resolves true once the node confirmed the subscription, false if it did not in time. */
  start(): Promise<boolean> {
    return new Promise((resolve) => {
      const { opts } = this;
      const { exact: _, ...select } = accountSelection(opts.mint, opts.program);
      let settled = false;
      const settle = (ok: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(ok);
      };
      const deadline = setTimeout(() => {
        settle(false);
        ws.terminate();
      }, opts.timeoutMs);
      const ws = new WebSocket(opts.url, { handshakeTimeout: opts.timeoutMs });
      this.ws = ws;
      // A connection that stops answering pings is dropped (then reconnected, a gap).
      let alive = true;
      const heartbeat = setInterval(() => {
        if (!alive) return ws.terminate();
        alive = false;
        ws.ping();
      }, HEARTBEAT_MS);
      ws.on('pong', () => {
        alive = true;
      });
      ws.on('open', () =>
        ws.send(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'programSubscribe',
            params: [opts.program, { commitment: opts.commitment, ...select }],
          }),
        ),
      );
      ws.on('message', (data) => {
        let msg: { id?: number; result?: unknown; error?: unknown; method?: string; params?: unknown };
        try {
          msg = JSON.parse(String(data));
        } catch {
          return;
        }
        if (msg.id === 1) {
          if (msg.error || typeof msg.result !== 'number') return settle(false);
          this.up = true;
          this.retry = opts.retryMs;
          return settle(true);
        }
        if (msg.method === 'programNotification') this.notice(msg.params);
      });
      ws.on('error', (e) => opts.log?.debug({ err: e.message, url: opts.url }, 'solana subscription error'));
      ws.on('close', () => {
        clearInterval(heartbeat);
        settle(false);
        if (this.up) this.gap = true;
        this.up = false;
        if (!this.closed) this.timer = setTimeout(() => this.reconnect(), this.retry);
      });
    });
  }

  private async reconnect(): Promise<void> {
    this.retry = Math.min(this.retry * 2, 60_000);
    if (await this.start()) this.gap = true; // what changed while it was down is unknown
  }

  private notice(params: unknown): void {
    const p = params as { result?: { context?: { slot?: number }; value?: WireAccount } };
    const slot = p.result?.context?.slot;
    const value = p.result?.value;
    if (slot === undefined || !value) return;
    const a = accountOf(value, accountSelection(this.opts.mint, this.opts.program).exact);
    if (!a) return;
    this.notices.delete(a.pubkey); // kept in arrival order: the latest last
    this.notices.set(a.pubkey, { ...a, slot });
    if (this.notices.size > this.opts.maxBuffered) {
      this.notices.clear();
      this.gap = true;
    }
    for (const w of this.wakers.splice(0)) w();
  }

  /** The latest notice of each account at a slot up to `slot`, taken out of the buffer. */
  take(slot: number): AccountNotice[] {
    const out: AccountNotice[] = [];
    for (const [pubkey, n] of this.notices)
      if (n.slot <= slot) {
        out.push(n);
        this.notices.delete(pubkey);
      }
    return out;
  }

  /** Resolves at once when notices wait, else at the next one (or once `signal` aborts). */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted || this.notices.size) return resolve();
      const wake = () => {
        this.wakers = this.wakers.filter((w) => w !== wake);
        resolve();
      };
      this.wakers.push(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.ws?.terminate();
    for (const w of this.wakers.splice(0)) w();
  }
}

/** The websocket URL of an RPC URL: the same address, ws(s) for http(s). */
export function wsUrlOf(rpcUrl: string): string {
  const u = new URL(rpcUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.toString();
}
