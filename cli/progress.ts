/**
 * Live progress of the devnet's backfill and of the EVM ingestion backfill, per chain:
 * blocks done/total, blocks/s, events/s, ETA. On a terminal: one bar per chain
 * (cli-progress) on stderr, with the log lines printed above the bars; elsewhere: an INFO
 * log line per chain every `intervalMs` while it backfills, and one when it is done.
 */
import cliProgress from 'cli-progress';
import { type Logger, routeTtyLogs } from '../core/log.ts';

/** What the display needs of one chain (a subset of ingest/evm/progress.ts's ChainProgress). */
export interface ChainProgressLike {
  chainId: number;
  name: string;
  /** starting, backfill, live, failing (or any other state the ingester reports, shown as it is). */
  phase: string;
  blocksDone: number;
  blocksTotal: number;
  blocksPerSecond: number;
  eventsPublished: number;
  etaSeconds: number | null;
  /** Wall-clock ms when this process first had every block up to the head ingested. */
  firstCaughtUpAt?: number;
}

/** The devnet's progress as `startDevnet`'s `onProgress` reports it. */
export interface DevnetProgress {
  phase: 'backfill' | 'live';
  day: number;
  days: number;
}

export interface ProgressDisplay {
  /** Pass as `startDevnet`'s `onProgress`. */
  devnet(p: DevnetProgress): void;
  /** Follows the EVM ingesters' progress entries from now on. */
  follow(chains: () => ChainProgressLike[]): void;
  stop(): void;
}

export interface ProgressOptions {
  log: Logger;
  /** Seconds between log lines when not on a terminal. */
  intervalMs: number;
  /** Bars (true) or log lines (false); default: whether stderr is a terminal. */
  tty?: boolean;
  stream?: NodeJS.WriteStream;
  clock?: () => number;
}

/** `75s` -> `1m15s`; null -> `?`. */
export function formatEta(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

const BAR_WIDTH = 24;
function bar(done: number, total: number): string {
  const f = total > 0 ? Math.min(1, done / total) : 0;
  const n = Math.round(f * BAR_WIDTH);
  return `${'█'.repeat(n)}${'░'.repeat(BAR_WIDTH - n)}`;
}

interface Rate {
  at: number;
  events: number;
  perSecond: number;
}

/** Live and every block counted (the follower moves `next` a moment before the meter counts the round). */
export function caughtUp(c: ChainProgressLike): boolean {
  return c.phase === 'live' && c.blocksDone >= c.blocksTotal;
}

/** One chain's line, as the bar shows it and the log line says it. */
export function chainLine(c: ChainProgressLike, eventsPerSecond: number): string {
  const blocks = `${c.blocksDone}/${c.blocksTotal} blocks`;
  if (caughtUp(c)) return `${blocks}, ${c.eventsPublished} events, live`;
  if (c.phase === 'starting') return 'starting (reading the head)';
  if (c.phase !== 'backfill' && c.phase !== 'failing' && c.phase !== 'live') return `${blocks}, ${c.phase}`;
  return `${blocks}, ${Math.round(c.blocksPerSecond)} blocks/s, ${Math.round(eventsPerSecond)} events/s, ETA ${formatEta(c.etaSeconds)}${c.phase === 'failing' ? ', failing (retrying)' : ''}`;
}

export function startProgress(opts: ProgressOptions): ProgressDisplay {
  const { log } = opts;
  const clock = opts.clock ?? Date.now;
  const stream = opts.stream ?? process.stderr;
  const tty = opts.tty ?? Boolean(stream.isTTY);
  const rates = new Map<number, Rate>();
  const wasLive = new Set<number>();
  let chains: (() => ChainProgressLike[]) | undefined;
  let devnetState: DevnetProgress | undefined;
  let devnetLoggedAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const startedAt = clock();

  /** When `follow` was called: the ingesters' event counts start with this process, at 0. */
  let followedAt = startedAt;
  const eventsPerSecond = (c: ChainProgressLike): number => {
    const now = clock();
    // From the first line on: the rate since the display began following, not 0 until a second line.
    let r = rates.get(c.chainId);
    if (!r) {
      r = { at: followedAt, events: 0, perSecond: 0 };
      rates.set(c.chainId, r);
    }
    const dt = (now - r.at) / 1000;
    if (dt >= 0.5) {
      const inst = (c.eventsPublished - r.events) / dt;
      r.perSecond = r.perSecond ? 0.6 * r.perSecond + 0.4 * inst : inst;
      r.at = now;
      r.events = c.eventsPublished;
    }
    return r.perSecond;
  };

  // ---- terminal: bars ----
  let multibar: cliProgress.MultiBar | undefined;
  const bars = new Map<string, cliProgress.SingleBar>();
  let restoreStdout = () => {};
  const ensureMultibar = () => {
    if (multibar) return multibar;
    multibar = new cliProgress.MultiBar({
      stream,
      format: (_o, _params, payload: { text: string }) => payload.text,
      hideCursor: true,
      gracefulExit: false,
      clearOnComplete: false,
      autopadding: false,
      linewrap: false,
      fps: 5,
      // Log lines printed above the bars overwrite them: draw every bar on every frame.
      forceRedraw: true,
    });
    // A line printed where a longer bar was drawn would keep the bar's tail ("... ETA ?"):
    // erase each line before writing it.
    const above = (text: string) => multibar?.log(text.replace(/^(?=.)/gm, '\x1b[2K'));
    routeTtyLogs(above);
    // Command output on the same terminal (the API's URLs) goes above the bars too.
    if (process.stdout.isTTY && process.stdout !== stream) {
      const write = process.stdout.write;
      process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        above(String(chunk));
        const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
        cb?.();
        return true;
      }) as typeof process.stdout.write;
      restoreStdout = () => {
        process.stdout.write = write;
      };
    }
    return multibar;
  };
  const show = (key: string, text: string) => {
    const mb = ensureMultibar();
    const b = bars.get(key);
    if (b) b.update(0, { text });
    else bars.set(key, mb.create(1, 0, { text }));
  };
  const label = (s: string) => s.padEnd(12);
  const finishBars = () => {
    if (!multibar) return;
    multibar.update();
    multibar.stop();
    multibar = undefined;
    bars.clear();
    routeTtyLogs(undefined);
    restoreStdout();
    restoreStdout = () => {};
  };

  const renderTty = () => {
    if (devnetState) {
      const d = devnetState;
      show(
        'devnet',
        `${label('devnet')} ${bar(d.day, d.days)} day ${d.day}/${d.days}${d.phase === 'live' ? ', backfill written, live' : ', writing history'}`,
      );
    }
    const list = chains?.() ?? [];
    for (const c of list)
      show(
        `chain:${c.chainId}`,
        `${label(c.name)} ${bar(c.blocksDone, c.blocksTotal)} ${chainLine(c, eventsPerSecond(c))}`,
      );
    // Everything caught up: leave the last state on screen and hand the terminal back to the logs.
    if (chains && list.length && list.every(caughtUp)) {
      finishBars();
      clearInterval(timer);
      timer = undefined;
    }
  };

  // ---- elsewhere: log lines ----
  const logChains = (final: boolean) => {
    for (const c of chains?.() ?? []) {
      const eps = eventsPerSecond(c);
      const fields = {
        chainId: c.chainId,
        chain: c.name,
        phase: c.phase,
        blocksDone: c.blocksDone,
        blocksTotal: c.blocksTotal,
        blocksPerSecond: Math.round(c.blocksPerSecond),
        eventsPerSecond: Math.round(eps),
        events: c.eventsPublished,
        etaSeconds: c.etaSeconds,
        // The line comes at the next tick; this is when the backfill ended (the sparse bench's end).
        ...(c.firstCaughtUpAt === undefined ? {} : { firstCaughtUpAt: c.firstCaughtUpAt }),
      };
      // Only the initial backfill: once live, a chain is briefly behind at every new block.
      if (wasLive.has(c.chainId)) continue;
      if (caughtUp(c)) {
        wasLive.add(c.chainId);
        const secs = Math.round((clock() - startedAt) / 1000);
        log.info(
          fields,
          `backfill ${c.name}: done, ${c.blocksDone}/${c.blocksTotal} blocks, ${c.eventsPublished} events in ${secs}s; live`,
        );
      } else if (!final) {
        log.info(fields, `backfill ${c.name}: ${chainLine(c, eps)}`);
      }
    }
  };

  const tick = () => {
    if (stopped) return;
    if (tty) renderTty();
    else logChains(false);
  };

  const ensureTimer = () => {
    if (timer || stopped) return;
    timer = setInterval(tick, tty ? 250 : Math.max(100, opts.intervalMs));
    timer.unref();
  };

  return {
    devnet(p) {
      if (stopped) return;
      devnetState = p;
      if (tty) {
        renderTty();
        ensureTimer();
        return;
      }
      const now = clock();
      if (p.phase === 'live')
        log.info({ days: p.days }, `devnet backfill: done, ${p.days} days of history written`);
      else if (now - devnetLoggedAt >= opts.intervalMs || p.day === p.days) {
        devnetLoggedAt = now;
        log.info({ day: p.day, days: p.days }, `devnet backfill: day ${p.day}/${p.days}`);
      }
    },
    follow(fn) {
      chains = fn;
      followedAt = clock();
      if (tty) renderTty();
      ensureTimer();
    },
    stop() {
      if (stopped) return;
      if (!tty) logChains(true);
      stopped = true;
      clearInterval(timer);
      timer = undefined;
      finishBars();
    },
  };
}

/**
 * The warning for an ingest role with no source: no chain has an RPC URL, the devnet is
 * off and Solana has no RPC URL; undefined when something is configured.
 */
export function nothingToIngest(cfg: {
  chains: { rpcUrls: string[] }[];
  devnet: { enabled: boolean };
  solana: { rpcUrls: string[] };
}): string | undefined {
  if (cfg.devnet.enabled || cfg.solana.rpcUrls.length || cfg.chains.some((c) => c.rpcUrls.length))
    return undefined;
  return (
    'nothing to ingest: no chain has rpcUrls, the devnet is off and solana.rpcUrls is empty; ' +
    'set chains[].rpcUrls (or solana.rpcUrls) in the config file, or devnet.enabled: true ' +
    '(VAULTSTREAM__devnet__enabled=true) for the local devnet'
  );
}
