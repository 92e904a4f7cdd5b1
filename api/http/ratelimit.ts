/**
 * Per-client rate limiting: a token bucket per client (the peer IP, or the first
 * value of a configured header such as `x-forwarded-for`), refilled at `rps`
 * tokens a second up to `burst`. Every answer carries `RateLimit-*` headers; an
 * empty bucket is a 429 `RATE_LIMITED` with `Retry-After`. Loopback clients are not
 * limited unless `limitLoopback` (local tools, health checks, the devnet).
 */
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import { ApiError } from './errors.ts';

export interface RateLimitOptions {
  /** Off: the middleware passes every request through untouched. */
  enabled?: boolean;
  /** Sustained requests per second per client. */
  rps: number;
  /** Requests a client may send at once (bucket size). */
  burst: number;
  /** Header naming the client; empty or absent = the peer IP. */
  header?: string;
  /** Clients tracked at most; the least recently seen are forgotten first (a forgotten client starts full). */
  maxClients?: number;
  clock?: () => number;
  /** Requests that are never limited (e.g. `/livez`, `/metrics`). */
  skip?: (ctx: Context) => boolean;
  /** Limit loopback clients (127.0.0.0/8, ::1) too; default false: they pass untouched. */
  limitLoopback?: boolean;
}

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms. */
export function isLoopback(ip: string): boolean {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  return ip === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export interface TakeResult {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until a token is available (0 when allowed). */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets keyed by client, bounded to `maxClients` (least recently seen evicted). */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly rps: number,
    private readonly burst: number,
    private readonly maxClients = 100_000,
  ) {}

  /** Takes one token for `client` at time `now` (ms). */
  take(client: string, now: number): TakeResult {
    const b = this.buckets.get(client) ?? { tokens: this.burst, at: now };
    this.buckets.delete(client); // re-insert: Map order is the recency order
    b.tokens = Math.min(this.burst, b.tokens + (Math.max(0, now - b.at) * this.rps) / 1000);
    b.at = now;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(client, b);
    if (this.buckets.size > this.maxClients) this.buckets.delete(this.buckets.keys().next().value as string);
    return {
      allowed,
      remaining: Math.floor(b.tokens),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / this.rps)),
      resetSeconds: Math.ceil((this.burst - b.tokens) / this.rps),
    };
  }

  /** Clients tracked now. */
  get size(): number {
    return this.buckets.size;
  }
}

/** The client key of a request: the first value of `header` when set and present, else the peer IP. */
export function clientKey(ctx: Context, header?: string): string {
  return clientKeyOf(header ? ctx.get(header) : '', ctx.ip);
}

/** `clientKey` from the raw header value and the peer IP. */
function clientKeyOf(headerValue: string | string[] | undefined, ip: string | undefined): string {
  const first = Array.isArray(headerValue) ? headerValue[0] : headerValue;
  const fromHeader = first ? first.split(',')[0].trim() : '';
  return (fromHeader || ip || 'unknown').slice(0, 256);
}

/** Set on `ctx.state` when `skip` exempted the request. */
export const RATE_LIMIT_SKIPPED = 'vaultstreamRateLimitSkipped';
/** A token already taken for the request (by the fast path, which then let Koa answer the refusal). */
const TAKEN = Symbol('rateLimitTaken');
type TakenRequest = IncomingMessage & { [TAKEN]?: TakeResult };
/** `take`'s answer for a client that is not limited (shared: never modified). */
const NOT_LIMITED: readonly string[] = Object.freeze([]);

export interface RateLimiter {
  middleware: Middleware;
  /**
   * The limit for a request answered outside Koa (the kit's fast path; not `skip`ped, no
   * proxy): the `RateLimit-*` headers as a flat name/value list (empty when the client is not
   * limited), or false when refused; then Koa must answer it, and its middleware reuses the
   * token taken here instead of taking another.
   */
  take(req: IncomingMessage): readonly string[] | false;
}

/** The rate-limit middleware (a pass-through when `enabled` is false). */
export function rateLimit(opts: RateLimitOptions): Middleware {
  return createRateLimiter(opts).middleware;
}

/** The rate limiter: its middleware, and the same buckets for the fast path. */
export function createRateLimiter(opts: RateLimitOptions): RateLimiter {
  if (opts.enabled === false) return { middleware: (_ctx, next) => next(), take: () => NOT_LIMITED };
  const buckets = new TokenBuckets(opts.rps, opts.burst, opts.maxClients);
  const clock = opts.clock ?? Date.now;
  const policy = `${opts.burst};w=${Math.max(1, Math.ceil(opts.burst / opts.rps))}`;
  const limit = String(opts.burst);
  const header = opts.header?.toLowerCase();
  const peers = new WeakMap<object, { client: string; exempt: boolean }>();
  const middleware: Middleware = async (ctx, next) => {
    if (opts.skip?.(ctx)) {
      ctx.state[RATE_LIMIT_SKIPPED] = true;
      return next();
    }
    const client = clientKey(ctx, opts.header);
    if (!opts.limitLoopback && isLoopback(client)) return next();
    const req = ctx.req as TakenRequest;
    const r = req[TAKEN] ?? buckets.take(client, clock());
    req[TAKEN] = undefined;
    ctx.set('RateLimit-Policy', policy);
    ctx.set('RateLimit-Limit', limit);
    ctx.set('RateLimit-Remaining', String(r.remaining));
    ctx.set('RateLimit-Reset', String(r.resetSeconds));
    if (!r.allowed)
      throw new ApiError('RATE_LIMITED', `rate limit exceeded; retry after ${r.retryAfterSeconds} s`, {
        headers: { 'Retry-After': String(r.retryAfterSeconds) },
      });
    await next();
  };
  return {
    middleware,
    take(req) {
      // Keyed by the peer IP: found once per connection (its address does not change).
      let peer = header ? undefined : peers.get(req.socket);
      if (!peer) {
        const client = clientKeyOf(header ? req.headers[header] : undefined, req.socket.remoteAddress);
        peer = { client, exempt: !opts.limitLoopback && isLoopback(client) };
        if (!header) peers.set(req.socket, peer);
      }
      if (peer.exempt) return NOT_LIMITED;
      const client = peer.client;
      const r = buckets.take(client, clock());
      if (!r.allowed) {
        (req as TakenRequest)[TAKEN] = r;
        return false;
      }
      return [
        'RateLimit-Policy',
        policy,
        'RateLimit-Limit',
        limit,
        'RateLimit-Remaining',
        String(r.remaining),
        'RateLimit-Reset',
        String(r.resetSeconds),
      ];
    },
  };
}
