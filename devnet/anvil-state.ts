/**
 * A running anvil node's whole chain as the JSON `anvil --load-state` starts from
 * (devnet/anvil.ts `restart`), and the replay of blocks from one node onto another.
 *
 * A dump (`anvil_dumpState`) holds every block, transaction and receipt (so the logs,
 * receipts and blocks of the whole history answer the same after a reload), the accounts at
 * the head and, when asked, the block states the node keeps in memory (so calls at those
 * blocks answer too). Each state carries a copy of every contract's code (about 180 KB here):
 * a dump of a node keeping 1,140 states is about 500 MB, so states are only ever dumped from
 * a node that keeps a few (devnet/anvil.ts `restart`), all of which a node loading them keeps
 * (anvil serializes them in its hash map's order, and a node loading more than it keeps would
 * keep the last inserted, not the newest). The dump stays bytes: the service's event loop
 * parses none of it.
 *
 * A replay re-sends each block's signed transactions in their order and mines them at the
 * block's time: anvil's blocks are deterministic (the parent hash, the state, the
 * transactions and the time make the header; prevrandao is the hash of the parent hash and
 * the number), so the replayed blocks have the same hashes, which the caller checks.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { VaultstreamError } from '../core/errors.ts';

const gunzipAsync = promisify(gunzip);

interface RpcAnswer<T> {
  id?: number;
  result?: T;
  error?: { code: number; message: string };
}

async function rpc<T>(rpcUrl: string, body: unknown): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new VaultstreamError('INTERNAL', `anvil at ${rpcUrl} answered HTTP ${res.status}`);
  return (await res.json()) as T;
}

export async function call<T>(rpcUrl: string, method: string, params: unknown[]): Promise<T> {
  const a = await rpc<RpcAnswer<T>>(rpcUrl, { jsonrpc: '2.0', id: 1, method, params });
  if (a.error || a.result === undefined)
    throw new VaultstreamError(
      'INTERNAL',
      `anvil at ${rpcUrl}: ${method} failed: ${a.error?.message ?? 'no result'}`,
    );
  return a.result;
}

/**
 * The chain of the node at `rpcUrl` as `--load-state` JSON, with the block states it keeps
 * when `withStates`. Nothing may be mined meanwhile: the caller pauses the node's writers.
 */
export async function dumpChain(rpcUrl: string, withStates: boolean): Promise<Buffer> {
  const hex = await call<string>(rpcUrl, 'anvil_dumpState', [withStates]);
  return gunzipAsync(Buffer.from(hex.slice(2), 'hex'));
}

/** The head's number and hash. */
export async function headOf(rpcUrl: string): Promise<{ number: number; hash: string }> {
  const b = await call<{ number: string; hash: string }>(rpcUrl, 'eth_getBlockByNumber', ['latest', false]);
  return { number: Number(b.number), hash: b.hash };
}

/**
 * Mines blocks `from`..`to` of the node at `source` again on the node at `target` (whose head
 * is block `from - 1` of the same chain): each block's transactions, signed as they were, in
 * their order, then the block at its time. Nothing else may write to `target` meanwhile.
 */
export async function replayBlocks(source: string, target: string, from: number, to: number): Promise<void> {
  await call(target, 'evm_setAutomine', [false]);
  for (let n = from; n <= to; n++) {
    const block = await call<{ timestamp: string; baseFeePerGas: string; transactions: string[] }>(
      source,
      'eth_getBlockByNumber',
      [`0x${n.toString(16)}`, false],
    );
    const raws = block.transactions.length
      ? await rpc<RpcAnswer<string>[]>(
          source,
          block.transactions.map((hash, id) => ({
            jsonrpc: '2.0',
            id,
            method: 'eth_getRawTransactionByHash',
            params: [hash],
          })),
        )
      : [];
    // One at a time: the pool keeps the order they arrive in (`--order fifo`).
    for (const raw of raws.sort((a, b) => (a.id ?? 0) - (b.id ?? 0))) {
      if (!raw.result)
        throw new VaultstreamError('INTERNAL', `anvil at ${source}: no raw transaction in block ${n}`);
      await call(target, 'eth_sendRawTransaction', [raw.result]);
    }
    // The base fee as mined: after a reorg (evm_revert) anvil's next base fee still follows the
    // orphaned blocks, so the replacement blocks' differs from what their parent implies.
    await call(target, 'anvil_setNextBlockBaseFeePerGas', [block.baseFeePerGas]);
    await call(target, 'evm_mine', [{ timestamp: Number(block.timestamp) }]);
  }
  await call(target, 'evm_setAutomine', [true]);
}
