/**
 * Starts anvil nodes (the npm platform binary, docs/architecture.md, Local chains, or `ANVIL_PATH`) on 127.0.0.1.
 * anvil cannot listen on port 0, so a free port is found by binding a server to
 * port 0 first; the tiny window before anvil binds it is retried on failure.
 *
 * No node outlives this process, however it ends: anvil runs under a tiny `sh`
 * wrapper that kills it when the wrapper's stdin (a pipe only this process writes)
 * reaches end of file, which the kernel delivers when this process dies, SIGKILL
 * included. The wrapper is the leader of its own process group (`detached`), out of
 * the terminal's foreground group: a Ctrl-C reaches only this process, which then
 * stops its nodes itself, in order (`stop()` closes the pipe).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type HDAccount, mnemonicToAccount } from 'viem/accounts';
import { VaultstreamError } from '../core/errors.ts';
import { lowerDetachedChild } from '../core/priority.ts';
import { dumpChain, headOf, replayBlocks } from './anvil-state.ts';

/** foundry's npm platform package for this OS and CPU (`@foundry-rs/anvil-<os>-<arch>`). */
export const ANVIL_PACKAGE = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;

/**
 * The platform package's anvil binary. `@foundry-rs/anvil-linux-amd64` is an optional dependency:
 * `npm ci` installs it on linux-x64 and skips it elsewhere (`--omit=optional` drops it too).
 */
export const ANVIL_BIN = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'node_modules',
  ANVIL_PACKAGE,
  'bin',
  'anvil',
);

/**
 * The anvil binary the devnet runs: `ANVIL_PATH` when set (e.g. foundryup's), else ANVIL_BIN;
 * a FILE_NOT_FOUND error saying how to get one when it is not there.
 */
export function anvilBin(env: NodeJS.ProcessEnv = process.env, packageBin: string = ANVIL_BIN): string {
  const bin = env.ANVIL_PATH || packageBin;
  if (existsSync(bin)) return bin;
  if (env.ANVIL_PATH)
    throw new VaultstreamError('FILE_NOT_FOUND', `anvil not found at ANVIL_PATH=${bin}`, {
      hint: 'set ANVIL_PATH to an anvil binary (foundryup installs ~/.foundry/bin/anvil), or unset it to use the npm package',
    });
  throw new VaultstreamError(
    'FILE_NOT_FOUND',
    `anvil not found: the devnet needs the npm package ${ANVIL_PACKAGE}`,
    {
      details: { path: bin },
      hint:
        `install it with \`npm install --no-save ${ANVIL_PACKAGE}\` (npm ci installs it on linux-x64 unless ` +
        'optional dependencies are omitted), or set ANVIL_PATH to an anvil binary; or turn the devnet off ' +
        '(devnet.enabled: false, or VAULTSTREAM__devnet__enabled=false)',
    },
  );
}

/** anvil's default mnemonic: its first 10 accounts hold 10000 ETH each on every node. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

/** The funded anvil account at `index` (0 is the deployer; the simulator's holders use the others). */
export function anvilAccount(index: number): HDAccount {
  return mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index });
}

/** The default anvil mnemonic's first key: the devnet's deployer on every chain. */
export const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;

export interface AnvilOptions {
  chainId: number;
  /** Default: a free port chosen by the OS. */
  port?: number;
  /** Seconds between blocks; default: a block per transaction (automine). */
  blockTime?: number;
  /** Unix seconds of the genesis block; default now. */
  timestamp?: number;
  /**
   * Blocks of many transactions (devnet/sim/chain.ts while writing history): a block gas
   * limit that holds them, and the pool mined in the order the transactions were sent.
   */
  manyPerBlock?: boolean;
  /**
   * Keep at most this many block states, in memory (`--prune-history`): none is written to
   * disk and older blocks' states are dropped (calls at them fail). Default: anvil's own
   * (a few in memory, the rest written under HOME, up to 3,600 of them).
   */
  keepStates?: number;
  /** A chain to start from (`anvil --load-state`, as devnet/anvil-state.ts dumps it). */
  chain?: Buffer;
  /**
   * Keep the transactions, receipts, call traces and logs of only the last this-many blocks
   * (`--transaction-block-keeper`): each block mined drops those of the block this many below
   * it (the block itself stays, with no transactions; eth_getLogs then finds nothing there, and
   * says nothing). Blocks of `chain` below `this many` under its head keep theirs for good.
   * Default: all kept.
   */
  keepTransactionBlocks?: number;
}

export interface RestartResult {
  /** Milliseconds between the old node's exit and the new one listening. */
  outageMs: number;
  /** Blocks replayed since the checkpoint (their states are carried over). */
  replayed: number;
  /** Size of the chain the new node started from (JSON). */
  chainBytes: number;
}

export interface AnvilNode {
  rpcUrl: string;
  chainId: number;
  port: number;
  /** The node's process group (the wrapper's pid): anvil and its watcher run in it. A restart changes it. */
  readonly pgid: number;
  /**
   * The node's own HOME (`vs-anvil-*` in the temp dir), where anvil keeps the states it moves
   * out of memory; removed when it exits. A restart changes it.
   */
  readonly home: string;
  /** Keeps the chain as it is now (its blocks, transactions and head state) for `restart`. */
  checkpoint(): Promise<void>;
  /**
   * Restarts the node on the same port keeping at most `keepStates` block states from then
   * on (devnet/state-trim.ts): from the last checkpoint's chain, with the blocks mined since
   * replayed first on a private node, whose states of them are carried over (calls at those
   * blocks answer; at older ones they fail, as past any bound). Every block, transaction,
   * receipt and log stays, with the same hashes (checked: on a difference the node is left
   * as it was and this throws). Nothing may write to the node meanwhile; its readers see
   * refused connections for `outageMs`. With `keepTransactionBlocks` the restarted node keeps
   * the transactions of only that many blocks from then on (AnvilOptions).
   */
  restart(keepStates: number, keepTransactionBlocks?: number): Promise<RestartResult>;
  /** Kills the node and waits for it to exit. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;
/** The nice value of every node from now on (`lowerNodes`); 0: the process's own. */
let nodesNice = 0;

/**
 * Runs every node of this process, those running and those started later (a restart's), at
 * `nice` (core/priority.ts): the embedded devnet stands in for remote chains and runs below the
 * API (api.pipelineNice). A node runs in a session of its own, so its session's value is set.
 */
export function lowerNodes(nice: number): void {
  nodesNice = Math.max(nodesNice, nice);
  for (const child of running) if (child.pid) lowerDetachedChild(child.pid, nodesNice);
}

/** Kills every node group still running when this process exits normally (the pipe covers the rest). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) killGroup(child, 'SIGKILL');
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * `sh -c WRAPPER anvil args...`: anvil in the background with its stdin from /dev/null,
 * a watcher that kills it once the wrapper's stdin (kept as fd 3) reaches EOF, and the
 * wrapper waiting for anvil, removing the node's own HOME (see spawnAnvil) and exiting
 * with anvil's status.
 */
const WRAPPER =
  'exec 3<&0; "$0" "$@" </dev/null & a=$!; { cat <&3 >/dev/null; kill $a 2>/dev/null; } & exec 3<&-; ' +
  'wait $a; s=$?; case "$HOME" in */vs-anvil-*) rm -rf "$HOME" ;; esac; exit $s';

/** Where each node's HOME is made (`vs-anvil-*`). */
export const ANVIL_HOMES = tmpdir();

/** A port the OS says is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Spawns anvil and resolves once it prints that it listens (the banner is printed
 * after the bind, so a port someone else holds is an exit, never a false start);
 * rejects with its output if it exits first. Later output is drained unread.
 */
function spawnAnvil(
  opts: AnvilOptions,
  port: number,
  bin: string,
  chain = opts.chain,
): Promise<{ child: ChildProcess; home: string }> {
  // Cancun, the hardfork the contracts are compiled for (devnet/compile.ts): from Prague on, every
  // block also writes its parent's hash into the EIP-2935 contract's storage (up to 8,191
  // slots), which anvil 1.7.1 copies into each block state it keeps.
  const args = ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(opts.chainId)];
  args.push('--hardfork', 'cancun');
  if (opts.blockTime) args.push('--block-time', String(opts.blockTime));
  if (opts.timestamp !== undefined) args.push('--timestamp', String(opts.timestamp));
  if (opts.manyPerBlock) args.push('--order', 'fifo', '--gas-limit', '1000000000');
  if (opts.keepStates) args.push('--prune-history', String(opts.keepStates));
  if (opts.keepTransactionBlocks) args.push('--transaction-block-keeper', String(opts.keepTransactionBlocks));
  // anvil writes the states it moves out of memory under $HOME/.foundry/anvil/tmp and leaves
  // them behind when it is killed (71 GB after a few days of tests here): each node gets a HOME
  // of its own, removed when it exits (by the wrapper, or here if the group was killed).
  const home = mkdtempSync(join(ANVIL_HOMES, 'vs-anvil-'));
  // A restart's chain (devnet/anvil-state.ts): read at start, deleted once the node listens.
  const chainFile = join(home, 'chain.json');
  if (chain !== undefined) {
    writeFileSync(chainFile, chain);
    args.push('--load-state', chainFile);
  }
  const child = spawn('/bin/sh', ['-c', WRAPPER, bin, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, HOME: home },
  });
  child.once('exit', () => rmSync(home, { recursive: true, force: true }));
  if (nodesNice && child.pid) lowerDetachedChild(child.pid, nodesNice);
  // The watcher's pipe: closed on stop(), or by the kernel when this process dies.
  child.stdin?.on('error', () => {});
  child.once('exit', () => child.stdin?.destroy());
  let output = '';
  const collect = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stderr?.on('data', collect);
  return new Promise((resolve, reject) => {
    const fail = (message: string, cause?: unknown) => {
      child.stdout?.off('data', onStdout);
      reject(new VaultstreamError('INTERNAL', message, { cause }));
    };
    const onStdout = (d: Buffer) => {
      collect(d);
      if (!output.includes(`Listening on 127.0.0.1:${port}`)) return;
      child.stdout?.off('data', onStdout);
      child.stderr?.off('data', collect);
      child.off('exit', onExit);
      child.stdout?.resume();
      child.stderr?.resume();
      if (chain !== undefined) rmSync(chainFile, { force: true });
      resolve({ child, home });
    };
    const onExit = (code: number | null) => fail(`anvil exited with ${code}: ${output.trim().slice(-500)}`);
    child.stdout?.on('data', onStdout);
    child.once('exit', onExit);
    child.once('error', (err) => fail(`cannot start anvil: ${err.message}`, err));
  });
}

/** A spawned node process: anvil under its wrapper, registered for the exit hook. */
interface Running {
  child: ChildProcess;
  home: string;
  exited: Promise<void>;
}

function track(spawned: { child: ChildProcess; home: string }): Running {
  const { child } = spawned;
  running.add(child);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // Resolved spawns have no exit listener left; this one keeps `running` accurate.
  child.once('exit', () => running.delete(child));
  return { ...spawned, exited };
}

async function stopRunning({ child, exited }: Running): Promise<void> {
  // EOF on the watcher's pipe: it sends anvil SIGTERM, and the wrapper exits with it.
  if (child.exitCode === null && child.signalCode === null) child.stdin?.end();
  const late = setTimeout(() => killGroup(child, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(late);
}

/**
 * Starts one anvil node for `chainId` and returns its RPC URL. The child is killed
 * on `stop()` or when this process exits.
 */
export async function startAnvil(opts: AnvilOptions): Promise<AnvilNode> {
  const bin = anvilBin();
  installExitHook();
  let lastError: unknown;
  // Another process may grab the probed port before anvil binds it: retry with a new one.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return nodeOf({ ...opts }, port, bin, track(await spawnAnvil(opts, port, bin)));
    } catch (err) {
      lastError = err;
      if (opts.port !== undefined) break;
    }
  }
  throw lastError;
}

function nodeOf(opts: AnvilOptions, port: number, bin: string, first: Running): AnvilNode {
  let current = first;
  let saved: { head: { number: number; hash: string }; chain: Buffer } | undefined;
  const rpcUrl = `http://127.0.0.1:${port}`;
  return {
    rpcUrl,
    chainId: opts.chainId,
    port,
    get pgid() {
      return current.child.pid as number;
    },
    get home() {
      return current.home;
    },
    async checkpoint() {
      saved = { head: await headOf(rpcUrl), chain: await dumpChain(rpcUrl, false) };
    },
    async restart(keepStates, keepTransactionBlocks = 0) {
      if (!saved) throw new VaultstreamError('INTERNAL', `anvil ${rpcUrl}: restart without a checkpoint`);
      const from = saved.head.number;
      const head = await headOf(rpcUrl);
      const replayed = head.number - from;
      // The blocks since the checkpoint, mined again on a private node keeping their states.
      const replica = await startAnvil({
        ...opts,
        port: undefined,
        keepStates: Math.max(1, Math.min(replayed, keepStates)),
        chain: saved.chain,
        // Dropping what this node dropped as it mined the same blocks (none before the first restart).
        keepTransactionBlocks: opts.keepTransactionBlocks,
      });
      let chain: Buffer;
      try {
        await replayBlocks(rpcUrl, replica.rpcUrl, from + 1, head.number);
        const end = await headOf(replica.rpcUrl);
        if (end.hash !== head.hash)
          throw new VaultstreamError(
            'INTERNAL',
            `anvil ${rpcUrl}: replayed block ${end.number} is ${end.hash}, not ${head.hash}; the node keeps running as it was`,
          );
        chain = await dumpChain(replica.rpcUrl, true);
      } finally {
        await replica.stop();
      }
      opts.keepStates = keepStates;
      opts.keepTransactionBlocks = keepTransactionBlocks || undefined;
      saved = undefined;
      const stopped = performance.now();
      await stopRunning(current);
      // The port is free once anvil has exited; should another process take it meanwhile,
      // a few more tries, then the node is gone (its readers fail as with any dead node).
      for (let attempt = 0; ; attempt++) {
        try {
          current = track(await spawnAnvil(opts, port, bin, chain));
          break;
        } catch (err) {
          if (attempt >= 20) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      return {
        outageMs: Math.round(performance.now() - stopped),
        replayed,
        chainBytes: Buffer.byteLength(chain),
      };
    },
    stop: () => stopRunning(current),
  };
}
