/**
 * The SQL interface in a process of its own, for a test to SIGKILL as the service would be:
 * `node --import tsx sql-server-child.ts <dataDir>` prints one JSON line, the interface's url and
 * the analysts' process id, once it listens, then stays until killed.
 */
import { startSqlServer } from './sql-server.ts';

const server = await startSqlServer(process.argv[2] as string);
process.stdout.write(`${JSON.stringify({ url: server.http.url, pid: server.http.pid })}\n`);
setInterval(() => {}, 60_000);
