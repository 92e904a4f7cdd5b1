/**
 * The `vaultstream` command. Every subcommand reads the same config (file plus
 * environment, validated once); `--help` on any of them lists its options.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { Config } from '../core/config.ts';
import { describeError } from '../core/errors.ts';
import { ownerOf } from '../core/lock.ts';
import type { Logger } from '../core/log.ts';
import type { Store } from '../store/client.ts';
import type { Format } from './output.ts';
import type { Role } from './roles.ts';

// Everything else loads inside the command that needs it (`await import()`): `--help` and
// `--version` load no engine, chain client, bus or logger (scripts/build.mjs keeps each apart).

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const program = new Command('vaultstream')
  .description('Multi-chain DeFi vault data: ingest, stream into ClickHouse, serve the API')
  .version(version, '-V, --version', 'print the version')
  .option(
    '-c, --config <file>',
    'config file (YAML or JSON); default $VAULTSTREAM_CONFIG or config/default.yaml',
  )
  .showHelpAfterError();

/** The config the command loaded, for the error report (which setting chose a port). */
let loaded: Config | undefined;

async function config(): Promise<Config> {
  const { loadConfig } = await import('../core/config.ts');
  loaded = loadConfig(program.opts().config);
  return loaded;
}

async function logger(cfg: Config): Promise<Logger> {
  const { createLogger } = await import('../core/log.ts');
  return createLogger(cfg.logLevel);
}

/** The setting behind each port the process listens on: a port in use names the one to change. */
function portSettings(cfg: Config | undefined): Record<number, string> {
  if (!cfg) return {};
  return {
    [cfg.sql.http.port]: 'sql.http.port in the config file, or VAULTSTREAM__sql__http__port=<port>',
    [cfg.api.port]: 'api.port in the config file, or API_PORT=<port>',
  };
}

/** Runs `fn` with the configured store, holding the embedded data directory meanwhile. */
async function withStore<T>(cfg: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const { claimDataDir } = await import('./roles.ts');
  const { createStore } = await import('./wiring.ts');
  const release = cfg.store.url ? () => {} : claimDataDir(cfg);
  const store = await createStore(cfg);
  try {
    return await fn(store);
  } finally {
    await store.close();
    release();
  }
}

const ROLES: readonly Role[] = ['ingest', 'streams', 'api'];

/** `--roles streams,api`: the roles named, each once, in a known order. */
function parseRoles(list: string): Role[] {
  const names = list.split(',').map((r) => r.trim());
  const unknown = names.filter((r) => !ROLES.includes(r as Role));
  if (unknown.length || names.length === 0)
    throw new InvalidArgumentError(
      `roles are a comma-separated list of ${ROLES.join(', ')}; got ${JSON.stringify(list)}`,
    );
  return ROLES.filter((r) => names.includes(r));
}

function roleCommand(name: string, roles: Role[], description: string, choosable = false) {
  const cmd = program.command(name).description(description);
  if (choosable)
    cmd.option(
      '--roles <list>',
      `run only these of ${ROLES.join(', ')} (e.g. streams,api: the consumers and the API over one embedded store, fed by ingesters elsewhere through Kafka)`,
      parseRoles,
    );
  cmd.action(async (opts: { roles?: Role[] }) => {
    const cfg = await config();
    const log = await logger(cfg);
    const { catchStopSignal, runRoles, runUntilSignal } = await import('./roles.ts');
    const signal = catchStopSignal(log);
    const running = await runRoles(cfg, opts.roles ?? roles, log);
    await runUntilSignal(running, log, signal);
  });
}

roleCommand(
  'start',
  [...ROLES],
  'run every role in one process (embedded default: chDB + in-process bus), or those --roles names',
  true,
);
roleCommand('ingest', ['ingest'], 'run the ingesters: publish the registry and chain events to the bus');
roleCommand('api', ['api'], 'run the HTTP API over the views');

program
  .command('streams')
  .description('run the stream consumers: bus to ClickHouse raw tables (applies migrations)')
  .option('--until-drained', 'exit once everything published before the start is stored')
  .action(async (opts: { untilDrained?: boolean }) => {
    const cfg = await config();
    const log = await logger(cfg);
    const { catchStopSignal, runRoles, runUntilSignal } = await import('./roles.ts');
    const signal = catchStopSignal(log);
    const running = await runRoles(cfg, ['streams'], log);
    if (!opts.untilDrained) return runUntilSignal(running, log, signal);
    await running.processor!.drained();
    // The metrics tables settle everything stored before the exit.
    await running.settler!.settleNow();
    await running.stop();
  });

program
  .command('devnet')
  .description(
    'run the local devnet alone: anvil nodes, the project contracts and the activity simulator; prints the chains and registry as config YAML',
  )
  .action(async () => {
    const cfg = await config();
    const log = await logger(cfg);
    const [
      { startProgress },
      { startDevnet },
      { catchStopSignal, runUntilSignal },
      { stringify: stringifyYaml },
    ] = await Promise.all([
      import('./progress.ts'),
      import('../devnet/run.ts'),
      import('./roles.ts'),
      import('yaml'),
    ]);
    const signal = catchStopSignal(log);
    const progress = startProgress({ log, intervalMs: cfg.ingest.progressLogIntervalMs });
    const devnet = await startDevnet({
      settings: cfg.devnet,
      dataDir: cfg.dataDir,
      log,
      onProgress: progress.devnet,
    });
    progress.stop();
    process.stdout.write(
      `${stringifyYaml({ chains: devnet.chains, vaults: devnet.vaults, solana: devnet.solana, mintFlow: devnet.mintFlow })}# ground truth: ${devnet.truthFile}\n`,
    );
    await runUntilSignal({ stop: () => devnet.stop() }, log, signal);
  });

program
  .command('migrate')
  .description('apply the SQL migrations of views/migrations to the configured store')
  .action(async () => {
    const cfg = await config();
    const log = await logger(cfg);
    const { migrate } = await import('../views/migrate.ts');
    await withStore(cfg, async (store) => {
      const res = await migrate(store, { database: cfg.store.database, cluster: cfg.store.cluster }, log);
      const { writeConfigTables } = await import('../views/settings.ts');
      await writeConfigTables(store, cfg);
      process.stdout.write(
        `applied: ${res.applied.join(', ') || 'none'}; already applied: ${res.skipped.length}\n`,
      );
    });
  });

program
  .command('replay')
  .description(
    'publish events from an NDJSON file ({"family": ..., "record": {...}} per line) through the bus',
  )
  .argument('<file>', 'NDJSON file')
  .action(async (file: string) => {
    const cfg = await config();
    const log = await logger(cfg);
    const [
      { createBus, createCodec, createStore },
      { replayFile },
      { migrate },
      { StreamProcessor },
      { claimDataDir },
    ] = await Promise.all([
      import('./wiring.ts'),
      import('../ingest/replay.ts'),
      import('../views/migrate.ts'),
      import('../streams/processor.ts'),
      import('./roles.ts'),
    ]);
    const bus = await createBus(cfg, log);
    const codec = createCodec(cfg);
    await bus.connect();
    // Embedded and nobody else owns the data directory: consume what we publish before exiting.
    const consumeHere = cfg.bus.kind === 'inprocess' && ownerOf(resolve(cfg.dataDir)) === undefined;
    const release = consumeHere ? claimDataDir(cfg) : () => {};
    try {
      const report = await replayFile(file, { bus, codec, topicPrefix: cfg.topicPrefix });
      for (const r of report.rejected) process.stderr.write(`${file}:${r.line}: rejected: ${r.reason}\n`);
      if (consumeHere) {
        const store = await createStore(cfg);
        await migrate(store, { database: cfg.store.database, cluster: cfg.store.cluster }, log);
        const processor = new StreamProcessor({ bus, store, codec, config: cfg, log });
        await processor.start();
        await processor.drained();
        await processor.stop();
        await store.close();
      }
      process.stdout.write(
        `published ${report.published} events, rejected ${report.rejected.length} lines${consumeHere ? '; stored' : ''}\n`,
      );
      process.exitCode = report.rejected.length ? 1 : 0;
    } finally {
      await bus.close();
      release();
    }
  });

program
  .command('sql')
  .description('run a query against the configured store and print the result')
  .argument('<query>', 'SQL; read-only unless --write')
  .option(
    '-f, --format <format>',
    'table, json, csv, or a ClickHouse output format (TabSeparated, JSONEachRow, CSVWithNames, ...); default: table on a terminal, TabSeparated when piped',
  )
  .option('--write', 'allow statements that change data or schema')
  .action(async (query: string, given: { format?: Format; write?: boolean }) => {
    const opts = { ...given, format: given.format ?? (process.stdout.isTTY ? 'table' : 'TabSeparated') };
    const cfg = await config();
    // Embedded and the data directory held by a running service: through its SQL interface.
    const owner = cfg.store.url ? undefined : ownerOf(resolve(cfg.dataDir));
    const { runSql, runSqlRemote } = await import('./sql.ts');
    if (owner !== undefined) {
      process.stdout.write(await runSqlRemote(cfg, owner, query, opts));
      return;
    }
    await withStore(cfg, async (store) => {
      process.stdout.write(await runSql(store, query, { ...opts, settings: cfg.sql }));
    });
  });

program
  .command('status')
  .description('print the pipeline state: migrations, chain watermarks, consumer lag, row counts')
  .action(async () => {
    const cfg = await config();
    const log = await logger(cfg);
    const [{ createBus, createCodec }, { StreamProcessor }, { pipelineStatus }] = await Promise.all([
      import('./wiring.ts'),
      import('../streams/processor.ts'),
      import('../api/status.ts'),
    ]);
    await withStore(cfg, async (store) => {
      const bus = await createBus(cfg, log);
      try {
        await bus.connect();
        const topics = new StreamProcessor({ bus, store, codec: createCodec(cfg), config: cfg }).topics;
        const st = await pipelineStatus(store, { bus, groupId: cfg.streams.groupId, topics });
        process.stdout.write(`${JSON.stringify(st, null, 2)}\n`);
      } finally {
        await bus.close();
      }
    });
  });

program
  .command('catalogue')
  .description('write the catalogue of tables, views and columns (from their COMMENTs) as Markdown')
  .option('-o, --out <file>', 'output file', 'docs/views.md')
  .action(async (opts: { out: string }) => {
    const cfg = await config();
    const log = await logger(cfg);
    const [{ migrate }, { renderCatalogue }] = await Promise.all([
      import('../views/migrate.ts'),
      import('../views/catalogue.ts'),
    ]);
    await withStore(cfg, async (store) => {
      await migrate(store, { database: cfg.store.database, cluster: cfg.store.cluster }, log);
      writeFileSync(opts.out, await renderCatalogue(store));
      process.stdout.write(`wrote ${opts.out}\n`);
    });
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  // Operator mistakes (a port in use, bad SQL, a missing config file) get their own code and a hint.
  const e = describeError(err, {
    portSettings: portSettings(loaded),
    storeUrl: loaded?.store.url || undefined,
  });
  process.stderr.write(`vaultstream: ${e.code}: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
  process.exit(2);
});
