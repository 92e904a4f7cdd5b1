/**
 * Fault injection for crash-safety tests: `VAULTSTREAM_FAILPOINTS=after-insert:3`
 * kills the process with SIGKILL right after the 3rd batch insert, before its offsets
 * are committed, the worst moment for exactly-once. Unset in production: a no-op.
 */
const spec = new Map<string, number>(
  (process.env.VAULTSTREAM_FAILPOINTS ?? '')
    .split(',')
    .map((s) => s.trim().split(':'))
    .filter(([name, n]) => name && Number(n) > 0)
    .map(([name, n]) => [name, Number(n)]),
);
const hits = new Map<string, number>();

export function failpoint(name: string): void {
  const at = spec.get(name);
  if (at === undefined) return;
  const n = (hits.get(name) ?? 0) + 1;
  hits.set(name, n);
  if (n === at) process.kill(process.pid, 'SIGKILL');
}
