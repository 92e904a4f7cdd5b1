// Compiles the CLI (cli/main.ts and everything it imports) to JavaScript in dist/ with esbuild, so
// `vaultstream` starts without compiling TypeScript at every start (tsx). `npm run build`; `npm ci`
// runs it (`prepare`); `--if-stale` builds only when dist/ is missing or older than a source file
// (npm start, scripts/test.sh); `--optional` (prepare) only warns when esbuild is not installed
// (`npm ci --omit=dev`): bin/vaultstream.mjs then runs the sources through tsx.
//
//   - One ESM bundle with code splitting: every `await import()` of the CLI (the chDB engine, the
//     devnet, the ingesters, the API...) becomes a chunk loaded only by the commands that need it.
//   - npm packages stay external (`packages: 'external'`): chdb's native library, kafkajs, viem,
//     @solana/*, pino and pino-pretty, solc, anvil load from node_modules exactly as under tsx.
//   - Files the sources find by path (`import.meta.url`: views/migrations/*.sql, schemas/avro/*.avsc,
//     devnet/contracts/*.sol, docs/queries, api/dashboard/assets, package.json, the
//     streams/encode-worker.mjs worker, createRequire) are not copied: each module's
//     `import.meta.url` is rewritten to its source file's URL (relative to the chunk, so the tree
//     can move), and every relative path resolves as it does under tsx.
//   - Three more entries: dist/api-thread.js (api/thread/worker.ts), the module the API's own thread
//     runs (api/thread/host.ts); dist/sql-analysts.js (api/sql/analysts-main.ts), the SQL
//     interface's process (api/sql/server.ts), and dist/sql-lane.js (api/sql/lane-worker.ts), its
//     lanes' threads (api/sql/lanes.ts): `VAULTSTREAM_BUNDLE` is defined so that their starters pick
//     them, and not the TypeScript sources, when they run from the bundle. They share the CLI's chunks.
//   - Chunks are content-hashed and never overwritten; the entry and dist/build-info.json are
//     replaced by rename, build-info last: a CLI already running keeps loading its own chunks while
//     another process rebuilds. Chunks no build referenced for a day are pruned.
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_INFO, compiledBuild, ROOT } from './build-state.mjs';

const root = fileURLToPath(ROOT);
const outdir = join(root, 'dist');
const ENTRY = 'vaultstream.js';
/** Entries written under a fixed name (not content-hashed): replaced by rename at each build. */
const FIXED = new Set(
  [ENTRY, 'api-thread.js', 'sql-analysts.js', 'sql-lane.js'].flatMap((name) => [name, `${name}.map`]),
);
const PRUNE_AFTER_MS = 24 * 3600 * 1000;

if (process.argv.includes('--if-stale')) {
  const state = compiledBuild();
  if (state.entry) process.exit(0);
  console.error(`vaultstream build: ${state.reason.replace(/: run npm run build$/, '')}; building`);
}

let build;
try {
  ({ build } = await import('esbuild'));
} catch (err) {
  if (!process.argv.includes('--optional')) throw err;
  console.error(
    `vaultstream build: skipped, esbuild is not installed (${err.code ?? err.message}); bin/vaultstream.mjs will use tsx`,
  );
  process.exit(0);
}

/** `import.meta.url` (and dirname/filename) of each project module -> its source file's location. */
const sourceLocation = {
  name: 'source-location',
  setup(b) {
    b.onLoad({ filter: /\.(ts|mts|js|mjs)$/ }, async (args) => {
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      let text = await readFile(args.path, 'utf8');
      if (/\bimport\.meta\.(url|dirname|filename)\b/.test(text)) {
        // Every chunk sits directly in dist/, so this path is right for whichever chunk holds the module.
        const rel = JSON.stringify(relative(outdir, args.path).split(sep).join('/'));
        const url = `new URL(${rel}, import.meta.url)`;
        text = text
          .replace(/\bimport\.meta\.url\b/g, `${url}.href`)
          .replace(/\bimport\.meta\.filename\b/g, `decodeURIComponent(${url}.pathname)`)
          .replace(
            /\bimport\.meta\.dirname\b/g,
            `decodeURIComponent(new URL('.', ${url}).pathname).slice(0, -1)`,
          );
      }
      const loader = /\.m?ts$/.test(args.path) ? 'ts' : 'js';
      return { contents: text, loader };
    });
  },
};

const startedAt = Date.now();
const t0 = performance.now();
const result = await build({
  absWorkingDir: root,
  entryPoints: {
    vaultstream: 'cli/main.ts',
    'api-thread': 'api/thread/worker.ts',
    'sql-analysts': 'api/sql/analysts-main.ts',
    'sql-lane': 'api/sql/lane-worker.ts',
  },
  define: { VAULTSTREAM_BUNDLE: 'true' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  chunkNames: '[name]-[hash]',
  entryNames: '[name]',
  legalComments: 'none',
  metafile: true,
  write: false,
  logLevel: 'warning',
  plugins: [sourceLocation],
});

mkdirSync(outdir, { recursive: true });
const written = new Set();
const entryFiles = [];
for (const file of result.outputFiles) {
  const name = relative(outdir, file.path);
  written.add(name);
  if (FIXED.has(name)) {
    entryFiles.push(file);
    continue;
  }
  // Content-hashed: an existing chunk of that name has these bytes (and a running CLI may be
  // reading it). Its mtime becomes the last build that used it, which pruning goes by.
  const now = new Date();
  try {
    utimesSync(file.path, now, now);
    continue;
  } catch {}
  atomicWrite(file.path, file.contents);
}
// The maps and the other entries first: the CLI entry's rename publishes the build.
const order = (f) => (f.path.endsWith('.map') ? 0 : relative(outdir, f.path) === ENTRY ? 2 : 1);
entryFiles.sort((a, b) => order(a) - order(b));
for (const file of entryFiles) atomicWrite(file.path, file.contents);

const inputs = Object.keys(result.metafile.inputs).sort();
atomicWrite(
  fileURLToPath(BUILD_INFO),
  `${JSON.stringify({ startedAt, entry: `dist/${ENTRY}`, inputs }, null, 1)}\n`,
);

for (const name of readdirSync(outdir)) {
  if (written.has(name) || name === 'build-info.json') continue;
  const path = join(outdir, name);
  try {
    if (Date.now() - statSync(path).mtimeMs > PRUNE_AFTER_MS) rmSync(path, { force: true });
  } catch {}
}

const bytes = result.outputFiles
  .filter((f) => !f.path.endsWith('.map'))
  .reduce((n, f) => n + f.contents.length, 0);
console.error(
  `vaultstream build: dist/${ENTRY} + ${written.size / 2 - 1} chunks and entries (${(bytes / 1024).toFixed(0)} KiB) from ${inputs.length} files in ${((performance.now() - t0) / 1000).toFixed(2)} s`,
);

function atomicWrite(path, contents) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}
