/**
 * The Solana follower alone in its own process, for bench/solana.ts (which holds the synthetic
 * mint and its RPC): the real follower over the in-process bus under a data directory, no store
 * and no consumers, so its time, CPU and peak RSS are the follower's. It reports its progress,
 * CPU seconds and peak RSS (VmHWM) to the parent every 100 ms over IPC, and stops on 'stop'.
 *
 *   process.argv: <rpcUrl> <mint> <dataDir>
 */
import { readFileSync } from 'node:fs';
import { createBus, createCodec } from '../cli/wiring.ts';
import { parseConfig } from '../core/config.ts';
import { silentLogger } from '../core/log.ts';
import { startSolanaIngest } from '../ingest/solana/index.ts';

const [rpcUrl, mint, dataDir] = process.argv.slice(2);
const config = parseConfig({
  dataDir,
  vaults: [
    {
      slug: 'bench',
      name: 'Bench Vault',
      symbol: 'BNCH',
      decimals: 6,
      vaultAddress: '0x593ccca4c4bf58b7526a4c164ceef4003c6388db',
      accountantAddress: '0xe0cd1d4e6a5b4bd1a0ea2bba7e5d0fd5b0e1cd7a',
      chainIds: [98866],
      solana: {
        mintAddress: mint,
        oftStoreAddress: mint,
        composerAddress: '0x00000000000000000000000000000000c0c0c0c0',
        decimals: 6,
        startBlock: 0,
      },
    },
  ],
  solana: { rpcUrls: [rpcUrl], commitment: 'finalized' },
});
const bus = await createBus(config, silentLogger);
await bus.connect();
const ingest = startSolanaIngest({ config, bus, codec: createCodec(config), log: silentLogger });

/** Peak resident set of this process (VmHWM), MB. */
const peakRss = () =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;
const report = () => {
  const cpu = process.cpuUsage();
  process.send?.({
    progress: ingest.progress()[0],
    cpuS: (cpu.user + cpu.system) / 1e6,
    peakRssMb: peakRss(),
  });
};
const timer = setInterval(report, 100);
process.on('message', async (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  await ingest.stop();
  await bus.close();
  report();
  process.exit(0);
});
