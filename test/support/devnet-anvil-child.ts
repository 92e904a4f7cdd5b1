/**
 * A process that starts two anvil nodes and prints their process groups as one JSON
 * line, then idles until killed: `node --import tsx devnet-anvil-child.ts`. The
 * orphan test SIGKILLs it and expects the nodes to go with it.
 */
import { startAnvil } from '../../devnet/anvil.ts';

const nodes = await Promise.all([startAnvil({ chainId: 31337 }), startAnvil({ chainId: 31338 })]);
process.stdout.write(
  `${JSON.stringify(nodes.map((n) => ({ pgid: n.pgid, rpcUrl: n.rpcUrl, home: n.home })))}\n`,
);
setInterval(() => {}, 60_000);
