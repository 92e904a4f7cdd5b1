/**
 * The request limiter's rates (rpc/request-limiter.ts): which URLs `auto` leaves unpaced, and the
 * pace it learns for the others, on a clock of the test's own (each request's wait advances it).
 */
import { describe, expect, it } from 'vitest';
import { AUTO_FLOOR, isPrivateHost, RequestLimiter } from '../../rpc/request-limiter.ts';

describe('isPrivateHost', () => {
  it('takes loopback, private, link-local and shared addresses and local names', () => {
    for (const url of [
      'http://127.0.0.1:8545',
      'http://127.3.2.1',
      'http://localhost:8545',
      'http://node.localhost',
      'http://[::1]:8545',
      'http://[::ffff:192.168.1.4]:8545',
      'http://[fd00::12]:8545',
      'http://10.1.2.3:8545',
      'http://172.20.0.5:8545',
      'http://192.168.0.10',
      'http://169.254.1.1',
      'http://100.101.102.103',
      'http://0.0.0.0:8545',
      'http://geth:8545',
      'http://erigon.local',
      'http://host.docker.internal:8545',
    ])
      expect(isPrivateHost(url), url).toBe(true);
  });

  it('leaves public addresses and names, and what is not a URL, to the public pace', () => {
    for (const url of [
      'https://eth.llamarpc.com',
      'https://rpc.ankr.com/eth',
      'http://8.8.8.8:8545',
      'http://172.32.0.1',
      'http://[2001:db8::1]',
      'http://[::ffff:8.8.8.8]',
      'not a url',
    ])
      expect(isPrivateHost(url), url).toBe(false);
  });
});

/** A limiter on a clock that only the waits move; `send(n)` starts n requests one after the other. */
function clocked(policy: number | 'auto') {
  let now = 0;
  const limiter = new RequestLimiter(
    policy,
    1_000,
    () => now,
    async (ms) => {
      now += ms;
    },
  );
  return {
    limiter,
    get now() {
      return now;
    },
    advance(ms: number) {
      now += ms;
    },
    async send(url: string, n: number) {
      for (let k = 0; k < n; k++) {
        await limiter.acquire(url);
        limiter.release();
      }
    },
  };
}

const PUBLIC = 'https://rpc.example.com';

describe('RequestLimiter rates', () => {
  it('paces every URL at a fixed rate, and none at 0', async () => {
    const c = clocked(10);
    await c.send(PUBLIC, 11);
    expect(c.now).toBe(1_000);
    await c.send('http://127.0.0.1:8545', 10);
    expect(c.now).toBe(2_000);
    const none = clocked(0);
    await none.send(PUBLIC, 1_000);
    expect(none.now).toBe(0);
  });

  it('sums the time requests waited for the pace and for a slot', async () => {
    const c = clocked(10);
    await c.send(PUBLIC, 11);
    // One after the other: each after the first waited 100 ms for its start.
    expect(c.limiter.waited).toEqual({ paceMs: 1_000, slotMs: 0 });
    let now = 0;
    const one = new RequestLimiter(0, 1, () => now);
    await one.acquire(PUBLIC);
    const second = one.acquire(PUBLIC);
    now = 250;
    one.release();
    await second;
    one.release();
    expect(one.waited).toEqual({ paceMs: 0, slotMs: 250 });
  });

  it('auto: no pace on a private network', async () => {
    const c = clocked('auto');
    await c.send('http://127.0.0.1:8545', 1_000);
    expect(c.now).toBe(0);
    expect(c.limiter.rateOf('http://127.0.0.1:8545')).toBe(Number.POSITIVE_INFINITY);
  });

  it('auto: a public URL starts at the floor and doubles while requests wait and none is refused', async () => {
    const c = clocked('auto');
    expect(c.limiter.rateOf(PUBLIC)).toBe(AUTO_FLOOR);
    await c.send(PUBLIC, AUTO_FLOOR + 1);
    expect(c.now).toBe(1_000);
    await c.send(PUBLIC, 1);
    expect(c.limiter.rateOf(PUBLIC)).toBe(2 * AUTO_FLOOR);
    // A second at 50: 100 from the next.
    await c.send(PUBLIC, 2 * AUTO_FLOOR);
    expect(c.limiter.rateOf(PUBLIC)).toBe(4 * AUTO_FLOOR);
    // Requests that never wait for the pace do not raise it.
    const idle = clocked('auto');
    for (let k = 0; k < 5; k++) {
      await idle.send(PUBLIC, 1);
      idle.advance(1_000);
    }
    expect(idle.limiter.rateOf(PUBLIC)).toBe(AUTO_FLOOR);
  });

  it('auto: a refusal halves the pace, never below the floor, and it then rises by steps', async () => {
    const c = clocked('auto');
    while (c.limiter.rateOf(PUBLIC) < 16 * AUTO_FLOOR) await c.send(PUBLIC, 1);
    const before = c.limiter.rateOf(PUBLIC);
    expect(before).toBe(16 * AUTO_FLOOR);
    // Doubled each second: 25, 50, 100, 200, then 400 (the first request of the fifth second).
    expect(Math.floor(c.now / 1_000)).toBe(4);
    c.limiter.refused(PUBLIC);
    // The refusals of the requests sent together count once.
    c.limiter.refused(PUBLIC);
    expect(c.limiter.rateOf(PUBLIC)).toBe(before / 2);
    // The window of the refusal does not raise it; the next without one adds the floor.
    await c.send(PUBLIC, Math.ceil(c.limiter.rateOf(PUBLIC)) + 1);
    await c.send(PUBLIC, Math.ceil(c.limiter.rateOf(PUBLIC)) + 1);
    expect(c.limiter.rateOf(PUBLIC)).toBe(before / 2 + AUTO_FLOOR);
    for (let k = 0; k < 10; k++) {
      c.limiter.refused(PUBLIC);
      c.advance(1_000);
    }
    expect(c.limiter.rateOf(PUBLIC)).toBe(AUTO_FLOOR);
  });

  it('auto: a provider refusing a quarter of its requests at random never pushes it below the fixed default', async () => {
    const c = clocked('auto');
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let least = Number.POSITIVE_INFINITY;
    for (let k = 0; k < 2_000; k++) {
      await c.limiter.acquire(PUBLIC);
      c.limiter.release();
      if (random() < 0.25) c.limiter.refused(PUBLIC);
      least = Math.min(least, c.limiter.rateOf(PUBLIC));
    }
    expect(least).toBe(AUTO_FLOOR);
    // 2,000 requests took no longer than the fixed default of 25 a second would.
    expect(c.now).toBeLessThanOrEqual((2_000 / AUTO_FLOOR) * 1_000);
  });
});
