/**
 * A separate process running the EVM ingester into an in-process bus, for the
 * kill-and-restart test: `tsx evm-child.ts <config.json> <busDir>`. It runs until killed.
 */
import { readFileSync } from 'node:fs';
import { InProcessBus } from '../../bus/inprocess.ts';
import { parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';

const [configFile, busDir] = process.argv.slice(2);
const config = parseConfig(JSON.parse(readFileSync(configFile, 'utf8')));
const bus = new InProcessBus({ dir: busDir, partitions: 4 });
await bus.connect();
startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
process.stdout.write('started\n');
