/**
 * The Emitter contract (`emitter/Emitter.sol`): a share stand-in that emits many ERC-20
 * `Transfer` logs per transaction, and the JSON-RPC helpers to deploy and drive it on an anvil
 * node. The EVM ingest tests and the EVM backfill benchmark use it to produce events fast.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, type Hex, http, parseAbi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEPLOYER_KEY } from './anvil.ts';
import { compileContracts } from './compile.ts';

const EMITTER_DIR = join(dirname(fileURLToPath(import.meta.url)), 'emitter');

/** The address whose value is `n` (e.g. `addr(0x5a1e)`). */
export const addr = (n: number): Hex => `0x${n.toString(16).padStart(40, '0')}`;

export const EMITTER_ABI = parseAbi([
  'function emitTransfers(address from, address to, uint256 first, uint256 n)',
  'function totalSupply() view returns (uint256)',
]);

/** JSON-RPC call to an anvil node. */
export async function anvilRpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** Deploys the Emitter with anvil's first account; returns its address. */
export async function deployEmitter(url: string): Promise<Hex> {
  const { Emitter } = compileContracts({ dir: EMITTER_DIR });
  const wallet = createWalletClient({ account: privateKeyToAccount(DEPLOYER_KEY), transport: http(url) });
  const hash = await wallet.deployContract({ abi: Emitter.abi, bytecode: Emitter.bytecode, chain: null });
  const pub = createPublicClient({ transport: http(url) });
  const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  return receipt.contractAddress as Hex;
}

/** Sends `emitTransfers(from, to, first, n)` to the emitter and waits for it to be mined. */
export async function emitTransfers(
  url: string,
  emitter: Hex,
  from: Hex,
  to: Hex,
  first: bigint,
  n: number,
): Promise<void> {
  const wallet = createWalletClient({ account: privateKeyToAccount(DEPLOYER_KEY), transport: http(url) });
  const hash = await wallet.writeContract({
    address: emitter,
    abi: EMITTER_ABI,
    functionName: 'emitTransfers',
    args: [from, to, first, BigInt(n)],
    chain: null,
    gas: 29_000_000n,
  });
  await createPublicClient({ transport: http(url) }).waitForTransactionReceipt({ hash, pollingInterval: 20 });
}
