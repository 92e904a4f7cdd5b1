/** Runs the `vaultstream` command in a child process, as an operator would. */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `vaultstream ...` as a child process the test can act on while it runs; `done` settles when it exits. */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; done: Promise<CliResult>; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'vaultstream.mjs'), ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done, stdout: () => stdout, stderr: () => stderr };
}

/** `vaultstream ...` run to its end; killed and rejected after `timeoutMs`. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<CliResult> {
  const { child, done, stderr } = spawnCli(args, env);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`vaultstream ${args.join(' ')} timed out; stderr: ${stderr().slice(-2000)}`));
    }, timeoutMs);
    done.then((r) => {
      clearTimeout(timer);
      resolve(r);
    });
  });
}
