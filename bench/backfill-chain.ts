/**
 * The backfill bench's chain (bench/backfill.ts): anvil with a batch emitter as the vault's share
 * token, `perBlock` share `Transfer` logs in each block (one transaction per block), first a mint
 * to each of `holders` holders, then transfers between them (about one in a hundred moves a
 * holder's whole balance, so some holders end at zero), seeded: every run writes the same chain.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeFunctionData, type Hex, keccak256, parseAbi, toHex } from 'viem';
import { type AnvilNode, anvilAccount } from '../devnet/anvil.ts';
import { compileContracts } from '../devnet/compile.ts';
import { anvilRpc as rpc } from '../devnet/emitter.ts';
import { Rng } from '../devnet/sim/rng.ts';

const SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
/// Bench-only share stand-in: one ERC-20 Transfer per 72-byte entry (from, to, amount) of the call.
contract BatchEmitter {
    event Transfer(address indexed from, address indexed to, uint256 amount);
    function emitBatch(bytes calldata packed) external {
        for (uint256 i = 0; i + 72 <= packed.length; i += 72) {
            emit Transfer(
                address(bytes20(packed[i:i + 20])),
                address(bytes20(packed[i + 20:i + 40])),
                uint256(bytes32(packed[i + 40:i + 72]))
            );
        }
    }
}
`;
const EMIT_ABI = parseAbi(['function emitBatch(bytes packed)']);

interface Move {
  from: string;
  to: string;
  amount: bigint;
}

export interface ChainPlan {
  transfers: number;
  perBlock: number;
  holders: number;
  seed: number;
  /**
   * Seconds between blocks, from `startTime` (the genesis time anvil was started with); 0: as
   * anvil mines them, at its own clock (the whole chain within a minute or so of now).
   */
  blockSeconds?: number;
  startTime?: number;
}

/** The seeded transfers and the holder count they leave (distinct addresses with a positive balance). */
function plan(p: ChainPlan): { moves: Move[]; holders: number } {
  // mulberry32 (the devnet simulator's Rng): every run writes the same chain.
  const rng = new Rng(p.seed);
  const rand = () => rng.next();
  const pick = (n: number) => Math.floor(rand() * n);
  const holders = Array.from({ length: p.holders }, (_, i) =>
    keccak256(toHex(`bench-holder-${p.seed}-${i}`)).slice(0, 42),
  );
  const balance = new Map<string, bigint>();
  const zero = `0x${'0'.repeat(40)}`;
  const moves: Move[] = [];
  for (let i = 0; i < p.transfers; i++) {
    if (i < p.holders) {
      const amount = 1_000_000_000_000n + BigInt(pick(1_000_000));
      moves.push({ from: zero, to: holders[i], amount });
      balance.set(holders[i], amount);
      continue;
    }
    let from = holders[pick(p.holders)];
    while ((balance.get(from) ?? 0n) === 0n) from = holders[pick(p.holders)];
    const to = holders[pick(p.holders)];
    const have = balance.get(from) as bigint;
    const small = BigInt(1 + pick(1_000_000));
    const amount = rand() < 0.01 || small > have ? have : small;
    balance.set(from, have - amount);
    balance.set(to, (balance.get(to) ?? 0n) + amount);
    moves.push({ from, to, amount });
  }
  return { moves, holders: [...balance.values()].filter((b) => b > 0n).length };
}

export interface BenchChain {
  /** The share token (the emitter) and the block it was deployed in. */
  emitter: Hex;
  deployBlock: number;
  /** The head once written (the transfers' blocks, then `emptyAfter` empty ones). */
  head: number;
  /** Holders with a positive balance at the end. */
  holders: number;
  generateSeconds: number;
}

/**
 * Writes the chain on `node` (compiling the emitter in `dir`), then `emptyAfter` empty blocks:
 * a run with `confirmations: n` reads every transfer once n blocks are on top of the last.
 */
export async function writeBenchChain(
  node: AnvilNode,
  dir: string,
  p: ChainPlan,
  emptyAfter: number,
): Promise<BenchChain> {
  const deployer = anvilAccount(0).address;
  const srcDir = join(dir, 'contracts');
  mkdirSync(srcDir);
  writeFileSync(join(srcDir, 'BatchEmitter.sol'), SOURCE);
  const { BatchEmitter } = compileContracts({ dir: srcDir });
  const t0 = performance.now();
  // Blocks mined by hand: automine may put transactions sent close together in one block.
  await rpc(node.rpcUrl, 'evm_setAutomine', [false]);
  const deployTx = await rpc<Hex>(node.rpcUrl, 'eth_sendTransaction', [
    { from: deployer, data: BatchEmitter.bytecode, gas: toHex(3_000_000) },
  ]);
  let block = 0;
  /** Mines the next block, at `blockSeconds` after the previous one when set. */
  const mine = () => {
    block++;
    return p.blockSeconds
      ? rpc(node.rpcUrl, 'evm_mine', [(p.startTime ?? 0) + block * p.blockSeconds])
      : rpc(node.rpcUrl, 'evm_mine');
  };
  await mine();
  const receipt = await rpc<{ contractAddress: Hex; blockNumber: Hex }>(
    node.rpcUrl,
    'eth_getTransactionReceipt',
    [deployTx],
  );
  const { moves, holders } = plan(p);
  for (let i = 0; i < moves.length; i += p.perBlock) {
    const packed = moves
      .slice(i, i + p.perBlock)
      .map((m) => m.from.slice(2) + m.to.slice(2) + m.amount.toString(16).padStart(64, '0'))
      .join('');
    const data = encodeFunctionData({ abi: EMIT_ABI, functionName: 'emitBatch', args: [`0x${packed}`] });
    // One transaction per block.
    await rpc(node.rpcUrl, 'eth_sendTransaction', [
      { from: deployer, to: receipt.contractAddress, data, gas: toHex(10_000_000) },
    ]);
    await mine();
  }
  for (let k = 0; k < emptyAfter; k++) await mine();
  const head = Number(await rpc<Hex>(node.rpcUrl, 'eth_blockNumber'));
  return {
    emitter: receipt.contractAddress,
    deployBlock: Number(receipt.blockNumber),
    head,
    holders,
    generateSeconds: (performance.now() - t0) / 1000,
  };
}
