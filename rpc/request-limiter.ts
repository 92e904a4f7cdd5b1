/**
 * A per-chain limit on RPC requests (chains[].maxRequestsPerSecond, maxConcurrentRequests):
 * public endpoints refuse clients that send faster or more at once, and a paid provider bills
 * by the call. `acquire` waits for a free slot and the request's start time, `release` hands the
 * slot on, `refused` says the provider refused a request as over its rate. Used by the EVM
 * transport (rpc/evm-transport.ts) around every HTTP request (a JSON-RPC batch is one request).
 *
 * The rate is a number (requests a second at most over all the chain's URLs; 0: none) or `auto`:
 * - a URL on this machine or a private network (`isPrivateHost`: a node of one's own) gets no rate
 *   limit, only the limit on requests in flight;
 * - any other URL starts at `AUTO_FLOOR` requests a second (what a public endpoint takes), and the
 *   pace rises while requests wait for it and the URL refuses none as over its rate: it doubles
 *   each such second until the first refusal, then rises by `AUTO_FLOOR` a second. A refusal
 *   halves it, never below `AUTO_FLOOR`. A learnt pace that could fall below the fixed default
 *   crawled behind a provider refusing requests at random (each refusal cut it again, where a
 *   retry alone costs one request): the floor keeps `auto` at least as fast as the fixed default,
 *   and the transport's retries (rpc/evm-transport.ts) take care of the refusals.
 */
import { BlockList, isIP } from 'node:net';
import { sleep } from '../core/retry.ts';

/** A rate (requests a second; 0 = none) or `auto` (see the module comment). */
export type RatePolicy = number | 'auto';

/** Where `auto` starts and the least it goes down to, for a URL not on a private network. */
export const AUTO_FLOOR = 25;
/** The most `auto` goes up to (the setting's own bound). */
const AUTO_MOST = 100_000;
/** How often `auto` reconsiders its pace. */
const AUTO_WINDOW_MS = 1_000;

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::1', 128],
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

/**
 * Whether `url`'s host is this machine or a private network: a loopback, private, link-local or
 * shared (100.64/10) address, `localhost` or a name under it, a name of one label (a container's
 * or a LAN's node, `http://geth:8545`), or under `.local` or `.internal`. Names are not resolved:
 * a public name that resolves to a private address keeps the public pace.
 */
export function isPrivateHost(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith('[')) host = host.slice(1, -1);
  const v = isIP(host);
  if (v === 4) return PRIVATE.check(host, 'ipv4');
  if (v === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1];
    return mapped ? PRIVATE.check(mapped, 'ipv4') : PRIVATE.check(host, 'ipv6');
  }
  const name = host.replace(/\.$/, '');
  return (
    !name.includes('.') ||
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name.endsWith('.local') ||
    name.endsWith('.internal')
  );
}

/** When requests may start at `perSecond` at most: each takes the next start time. */
class Pace {
  /** When the next request may start (performance.now()). */
  private nextAt = 0;
  constructor(protected perSecond: number) {}

  /** Milliseconds the request starting now waits (its start time taken). */
  take(now: number): number {
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + 1000 / this.perSecond;
    return at - now;
  }

  refused(_now: number): void {}

  get rate(): number {
    return this.perSecond;
  }
}

/** `auto` for a URL not on a private network (see the module comment). */
class LearntPace extends Pace {
  private windowAt = Number.NEGATIVE_INFINITY;
  /** Whether a request of this window waited for the pace, and whether one was refused. */
  private waited = false;
  private refusedNow = false;
  /** Whether the URL ever refused a request as over its rate (then the pace rises by steps). */
  private everRefused = false;
  private cutAt = Number.NEGATIVE_INFINITY;

  constructor() {
    super(AUTO_FLOOR);
  }

  override take(now: number): number {
    if (now - this.windowAt >= AUTO_WINDOW_MS) {
      if (this.waited && !this.refusedNow)
        this.perSecond = Math.min(
          AUTO_MOST,
          this.everRefused ? this.perSecond + AUTO_FLOOR : this.perSecond * 2,
        );
      this.windowAt = now;
      this.waited = false;
      this.refusedNow = false;
    }
    const wait = super.take(now);
    if (wait > 0) this.waited = true;
    return wait;
  }

  /** Halved (at most once a window: the requests sent at the old pace are refused together). */
  override refused(now: number): void {
    this.everRefused = true;
    this.refusedNow = true;
    if (now - this.cutAt < AUTO_WINDOW_MS) return;
    this.cutAt = now;
    this.perSecond = Math.max(AUTO_FLOOR, this.perSecond / 2);
  }
}

export class RequestLimiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** A fixed rate's one pace, shared by every URL. */
  private readonly shared: Pace | undefined;
  /** `auto`: each URL's pace (undefined: none, a private host). */
  private readonly paces = new Map<string, Pace | undefined>();

  /**
   * `perSecond`: a rate, 0 (none) or `auto`; `concurrent` requests in flight at most; `clock` and
   * `wait` (tests: a clock of their own) instead of performance.now() and a timer.
   */
  constructor(
    private readonly perSecond: RatePolicy,
    private readonly concurrent: number,
    private readonly clock: () => number = () => performance.now(),
    private readonly wait: (ms: number) => Promise<void> = sleep,
  ) {
    this.shared = typeof perSecond === 'number' && perSecond > 0 ? new Pace(perSecond) : undefined;
  }

  private paceOf(url: string): Pace | undefined {
    if (this.perSecond !== 'auto') return this.shared;
    if (!this.paces.has(url)) this.paces.set(url, isPrivateHost(url) ? undefined : new LearntPace());
    return this.paces.get(url);
  }

  /** Requests a second `url` is paced at now (Infinity: none). */
  rateOf(url: string): number {
    return this.paceOf(url)?.rate ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Milliseconds requests spent waiting, summed over them: for a slot (`maxConcurrentRequests`
   * binds) and for their start time (the pace binds).
   */
  readonly waited = { slotMs: 0, paceMs: 0 };

  /** Waits for a slot and the request's start time; call `release` once the request ended. */
  async acquire(url: string): Promise<void> {
    if (this.active < this.concurrent) this.active++;
    else {
      // The releasing request hands its slot over: `active` stays as it is.
      const from = this.clock();
      await new Promise<void>((r) => this.waiting.push(r));
      this.waited.slotMs += this.clock() - from;
    }
    const ms = this.paceOf(url)?.take(this.clock()) ?? 0;
    if (ms > 0) {
      this.waited.paceMs += ms;
      await this.wait(ms);
    }
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  /** `url` refused a request as over its rate (HTTP 429, -32005). */
  refused(url: string): void {
    this.paceOf(url)?.refused(this.clock());
  }
}
