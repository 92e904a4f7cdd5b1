/**
 * Fault injection for crash-safety tests: `VAULTSTREAM_FAILPOINTS=after-insert:3`
 * kills the process with SIGKILL right after the 3rd batch insert, before its offsets
 * are committed, the worst moment for exactly-once. `before-insert:3@12` kills it 12 ms
 * after the 3rd insert began, while the engine writes it on its own threads. Several
 * are comma-separated. Unset in production: a no-op.
 */
const spec = new Map<string, { at: number; delayMs?: number }>(
  (process.env.VAULTSTREAM_FAILPOINTS ?? '')
    .split(',')
    .map((s) => /^\s*([\w-]+):(\d+)(?:@(\d+))?\s*$/.exec(s))
    .filter((m): m is RegExpExecArray => m !== null && Number(m[2]) > 0)
    .map((m) => [m[1], { at: Number(m[2]), delayMs: m[3] === undefined ? undefined : Number(m[3]) }]),
);
const hits = new Map<string, number>();

export function failpoint(name: string): void {
  const point = spec.get(name);
  if (point === undefined) return;
  const n = (hits.get(name) ?? 0) + 1;
  hits.set(name, n);
  if (n !== point.at) return;
  if (point.delayMs === undefined) process.kill(process.pid, 'SIGKILL');
  else setTimeout(() => process.kill(process.pid, 'SIGKILL'), point.delayMs);
}
