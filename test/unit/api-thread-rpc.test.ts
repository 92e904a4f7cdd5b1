/**
 * The port protocol between the main thread and the API's thread (api/thread/rpc.ts), over a
 * real MessageChannel: results and bytes cross, errors come back with the fields the API's and
 * the CLI's error mapping read, and a cancelled call aborts the other side's handler.
 */
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { asBuffer, Peer } from '../../api/thread/rpc.ts';
import { isRetryable, VaultstreamError } from '../../core/errors.ts';

const peers: Peer[] = [];
afterEach(() => {
  for (const p of peers.splice(0)) p.close();
});

function pair(handlers: ConstructorParameters<typeof Peer>[1]): Peer {
  const { port1, port2 } = new MessageChannel();
  const server = new Peer(port2, handlers);
  const client = new Peer(port1);
  peers.push(server, client);
  return client;
}

describe('API thread port protocol', () => {
  it('returns results, and bytes as Buffers again', async () => {
    const client = pair({ echo: ([x]) => x, bytes: () => Buffer.from('abc') });
    expect(await client.call('echo', [{ a: 1n, b: ['x'] }])).toEqual({ a: 1n, b: ['x'] });
    const bytes = asBuffer(await client.call<Uint8Array>('bytes'));
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(bytes.toString()).toBe('abc');
  });

  it('rebuilds errors with their code, fields and cause', async () => {
    const client = pair({
      unavailable: () => {
        throw new VaultstreamError('STORE_UNAVAILABLE', 'store down', { details: { table: 't' } });
      },
      inUse: () => {
        throw Object.assign(new Error('listen EADDRINUSE'), {
          code: 'EADDRINUSE',
          port: 3000,
          address: '::',
        });
      },
      wrapped: () => {
        throw Object.assign(new Error('query failed', { cause: new Error('engine') }), { code: '60' });
      },
    });
    const a = await client.call('unavailable').catch((e) => e);
    expect(a).toBeInstanceOf(VaultstreamError);
    expect(a).toMatchObject({ code: 'STORE_UNAVAILABLE', message: 'store down', details: { table: 't' } });
    expect(isRetryable(a)).toBe(isRetryable(new VaultstreamError('STORE_UNAVAILABLE', 'x')));
    expect(await client.call('inUse').catch((e) => e)).toMatchObject({ code: 'EADDRINUSE', port: 3000 });
    const w = await client.call('wrapped').catch((e) => e);
    expect(w).toMatchObject({ code: '60', message: 'query failed' });
    expect((w as Error).cause).toMatchObject({ message: 'engine' });
    await expect(client.call('nothing')).rejects.toThrow(/no method nothing/);
  });

  it('a cancelled call aborts the handler on the other side', async () => {
    let aborted: () => void = () => {};
    const seen = new Promise<void>((r) => {
      aborted = r;
    });
    const client = pair({
      slow: (_args, signal) =>
        new Promise((_, reject) => {
          signal.addEventListener('abort', () => {
            aborted();
            reject(new Error('cancelled'));
          });
        }),
    });
    const ac = new AbortController();
    const call = client.call('slow', [], ac.signal);
    ac.abort();
    await seen;
    await expect(call).rejects.toThrow('cancelled');
  });
});
