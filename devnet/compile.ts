/**
 * Compiles the devnet's Solidity (`devnet/contracts/*.sol`) offline with solc-js and
 * caches the result by a hash of the sources, the compiler version and the settings,
 * under the OS temp dir: solc-js takes seconds, a cache hit a few milliseconds.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';
import { VaultstreamError } from '../core/errors.ts';

/** One compiled contract: its ABI, creation code and runtime code. */
export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
}

/** Every contract of `devnet/contracts`, by contract name (names are unique across files). */
export type CompiledContracts = Record<string, CompiledContract>;

const CONTRACTS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'contracts');
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
};

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

/** The sources as solc's standard JSON wants them, keyed by file name. */
function readSources(dir: string): Record<string, { content: string }> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sol'))
    .sort();
  return Object.fromEntries(files.map((f) => [f, { content: readFileSync(join(dir, f), 'utf8') }]));
}

const requireHere = createRequire(import.meta.url);

/**
 * `require(id)` of the `solc` package (a dev dependency: production installs, `npm ci --omit=dev`
 * and the Docker image, have none), or a FILE_NOT_FOUND error saying how to get it.
 */
export function requireSolc<T>(
  id: 'solc' | 'solc/package.json',
  req: (id: string) => unknown = requireHere,
): T {
  try {
    return req(id) as T;
  } catch (err) {
    if ((err as { code?: string }).code !== 'MODULE_NOT_FOUND') throw err;
    throw new VaultstreamError(
      'FILE_NOT_FOUND',
      'solc not found: the devnet compiles its contracts with the npm package solc',
      {
        cause: err,
        hint:
          'install the dev dependencies (`npm ci`, not `npm ci --omit=dev`) or `npm install --no-save solc`; ' +
          'or turn the devnet off (devnet.enabled: false, or VAULTSTREAM__devnet__enabled=false)',
      },
    );
  }
}

function runSolc(sources: Record<string, { content: string }>): CompiledContracts {
  const solc = requireSolc<{ compile(input: string): string }>('solc');
  const out = JSON.parse(
    solc.compile(JSON.stringify({ language: 'Solidity', sources, settings: SETTINGS })),
  ) as SolcOutput;
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length)
    throw new VaultstreamError(
      'INTERNAL',
      `solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`,
    );
  const compiled: CompiledContracts = {};
  for (const file of Object.values(out.contracts)) {
    for (const [name, c] of Object.entries(file)) {
      compiled[name] = {
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      };
    }
  }
  return compiled;
}

/**
 * Compiles `devnet/contracts` (or `opts.dir`), reading and writing the cache in
 * `opts.cacheDir` (default `<tmpdir>/vaultstream-solc`). Concurrent callers may both
 * compile on a miss; the cache file is replaced atomically.
 */
export function compileContracts(opts: { dir?: string; cacheDir?: string } = {}): CompiledContracts {
  const sources = readSources(opts.dir ?? CONTRACTS_DIR);
  const { version: solcVersion } = requireSolc<{ version: string }>('solc/package.json');
  const key = createHash('sha256').update(JSON.stringify({ solcVersion, SETTINGS, sources })).digest('hex');
  const cacheDir = opts.cacheDir ?? join(tmpdir(), 'vaultstream-solc');
  const file = join(cacheDir, `${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CompiledContracts;
  } catch {
    // A miss (or a torn file from an older crash): compile below.
  }
  const compiled = runSolc(sources);
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(compiled));
  renameSync(tmp, file);
  return compiled;
}
