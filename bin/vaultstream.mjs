#!/usr/bin/env -S UV_THREADPOOL_SIZE=16 node --max-semi-space-size=16
// 16 libuv threads (Node's default is 4; `npm start` and the Docker image set the same; it can only
// be set before Node starts, not here): chDB's queries hold a libuv thread while they wait their
// turn on their connection, and the bus's and checkpoints' writes and fsyncs queued behind them
// (README "Architecture").
// A 16 MB young generation (Node's own default on 64-bit; the Docker image passes the same, `npm
// start` leaves Node's default): each of the two semi-spaces is resident once grown, and at 64 MB
// the EVM backfill bench's peak RSS was higher for no CPU it measurably saved there. The
// flag holds for every thread; without it the API's thread takes the young generation
// api/thread/host.ts gives it (docs/operations.md, "Embedded and distributed").
//
// Runs the compiled CLI (dist/, `npm run build`, which `npm ci` runs) when it is there and no
// source file changed since it was built; otherwise the TypeScript sources through tsx's loader
// (slower to start: it compiles at every start), so an edit is never run stale.
// VAULTSTREAM_RUNTIME=compiled runs dist/ as built, without the freshness check, and never tsx (the
// Docker image; exit 2 when there is no build); VAULTSTREAM_RUNTIME=tsx always runs the sources.
import { compiledBuild } from '../scripts/build-state.mjs';

const runtime = process.env.VAULTSTREAM_RUNTIME ?? 'auto';
const build =
  runtime === 'tsx'
    ? { reason: 'VAULTSTREAM_RUNTIME=tsx' }
    : compiledBuild({ checkSources: runtime !== 'compiled' });
if (build.entry) {
  await import(build.entry.href);
} else if (runtime === 'compiled') {
  process.stderr.write(`vaultstream: BUILD_MISSING: ${build.reason}\n`);
  process.exit(2);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
