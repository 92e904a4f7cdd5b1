/**
 * anvil (optional dependency) and solc (dev dependency) may be absent, e.g. `npm ci --omit=dev`,
 * the Docker image, or a platform without `@foundry-rs/anvil-linux-amd64`: the devnet then stops
 * with FILE_NOT_FOUND naming the package and the command that installs it.
 */
import { describe, expect, it } from 'vitest';
import { VaultstreamError } from '../../core/errors.ts';
import { ANVIL_BIN, ANVIL_PACKAGE, anvilBin } from '../../devnet/anvil.ts';
import { requireSolc } from '../../devnet/compile.ts';

function caught(fn: () => unknown): VaultstreamError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(VaultstreamError);
    return err as VaultstreamError;
  }
  throw new Error('expected an error');
}

describe('devnet tools when missing', () => {
  it('anvil: the installed platform package is found here (npm ci installs the optional dependency)', () => {
    expect(ANVIL_PACKAGE).toBe(
      `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`,
    );
    expect(anvilBin({})).toBe(ANVIL_BIN);
    expect(anvilBin({ ANVIL_PATH: ANVIL_BIN })).toBe(ANVIL_BIN);
  });

  it('anvil: a missing ANVIL_PATH names the path and how to fix it', () => {
    const err = caught(() => anvilBin({ ANVIL_PATH: '/nonexistent/anvil' }));
    expect(err.code).toBe('FILE_NOT_FOUND');
    expect(err.message).toBe('anvil not found at ANVIL_PATH=/nonexistent/anvil');
    expect(err.hint).toContain('set ANVIL_PATH to an anvil binary');
  });

  it('anvil: a missing platform package names the package and the install command', () => {
    const err = caught(() => anvilBin({}, '/nonexistent/node_modules/@foundry-rs/x/bin/anvil'));
    expect(err.code).toBe('FILE_NOT_FOUND');
    expect(err.message).toBe(`anvil not found: the devnet needs the npm package ${ANVIL_PACKAGE}`);
    expect(err.hint).toContain(`\`npm install --no-save ${ANVIL_PACKAGE}\``);
    expect(err.hint).toContain('ANVIL_PATH');
  });

  it('solc: a missing package is FILE_NOT_FOUND with the install command', () => {
    const missing = (id: string) => {
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
    };
    const err = caught(() => requireSolc('solc', missing));
    expect(err.code).toBe('FILE_NOT_FOUND');
    expect(err.message).toBe('solc not found: the devnet compiles its contracts with the npm package solc');
    expect(err.hint).toContain('`npm install --no-save solc`');
    expect(err.hint).toContain('VAULTSTREAM__devnet__enabled=false');
  });

  it('solc: other load errors pass through; the installed package loads', () => {
    const broken = () => {
      throw new SyntaxError('bad');
    };
    expect(() => requireSolc('solc', broken)).toThrow(SyntaxError);
    expect(requireSolc<{ version: string }>('solc/package.json').version).toMatch(/^0\.8\./);
  });
});
