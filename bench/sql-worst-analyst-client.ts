/**
 * The worst analyst of bench/sql-worst-analyst.ts, in a process of its own (`tsx
 * bench/sql-worst-analyst-client.ts <sql url> [loop,...]`): every request of the findings in
 * test/integration/sql-findings.test.ts, each in a loop of its own, until its stdin closes; then it prints what it
 * sent and the answers by loop and status (`SENT {"sent": {...}, "answers": {...}}`). It reads
 * answers raw and drops them, never decoding them: the analyst's client costs this machine,
 * which the service shares with it, as little as a client can, and the server as much as it can.
 * Apart from the load generator, whose loop the rows time.
 */
import { request } from 'node:http';

/** The analyst: each finding's request in a loop of its own until `stop()`; counts what it sent. */
export function worstAnalyst(sqlUrl: string, only: string[]) {
  let running = true;
  const sent: Record<string, number> = {};
  /** The answers by loop and status (`error`: no answer, the connection failed or was cut). */
  const answers: Record<string, number> = {};
  const count = (k: string) => {
    sent[k] = (sent[k] ?? 0) + 1;
  };
  const answered = (k: string, status: number | undefined) => {
    const key = `${k} ${status ?? 'error'}`;
    answers[key] = (answers[key] ?? 0) + 1;
  };
  // The answer's bytes are read and dropped as they come, never decoded: the analyst's client costs
  // this machine (which the service shares with it) as little as a client can, and the server as
  // much as it can.
  const get = (what: string, query: string, extra = '', headers: Record<string, string> = {}) =>
    new Promise<void>((done) => {
      count(what);
      const req = request(`${sqlUrl}/?query=${encodeURIComponent(query)}${extra}`, { headers }, (res) => {
        answered(what, res.statusCode);
        res.resume();
        res.on('end', () => done());
        res.on('error', () => done());
        res.on('close', () => done());
      });
      req.on('error', () => {
        answered(what, undefined);
        done();
      });
      req.end();
    });
  const big = 'SELECT randomPrintableASCII(100) FROM numbers(300000) FORMAT TSV';
  const loops: Record<string, () => Promise<void>> = {
    'compressed br': () =>
      get('compressed br', big, '&enable_http_compression=1', { 'Accept-Encoding': 'br' }),
    'compressed gzip': () =>
      get('compressed gzip', big, '&enable_http_compression=1', { 'Accept-Encoding': 'gzip' }),
    'compress=1': () => get('compress=1', big, '&compress=1'),
    'forbidden reads': async () => {
      for (const q of [
        "DESCRIBE (SELECT 1 LIMIT (SELECT toString(groupArray((name, value))) FROM system.server_settings WHERE value LIKE '%/%'))",
        'DESCRIBE (SELECT * FROM generateRandom((SELECT any(path) FROM system.disks)))',
        "SELECT 'x' IN system.disks",
        'DESCRIBE (SELECT 1 LIMIT (SELECT toString(groupArray(last_error_message)) FROM system.errors))',
      ])
        await get('forbidden reads', q);
    },
    'heavy, 1e-300': () =>
      get(
        'heavy, 1e-300',
        'SELECT sum(cityHash64(number)) FROM numbers(100000000000)',
        '&max_execution_time=1e-300',
      ),
    heavy: () => get('heavy', 'SELECT sum(cityHash64(number)) FROM numbers(100000000000)'),
    'long parse': async () => {
      count('long parse');
      const where = Array.from({ length: 30_000 }, (_, i) => `${i} = ${i}`).join(' AND ');
      await new Promise<void>((done) => {
        const req = request(`${sqlUrl}/`, { method: 'POST' }, (res) => {
          answered('long parse', res.statusCode);
          res.resume();
          res.on('close', () => done());
        });
        req.on('error', () => {
          answered('long parse', undefined);
          done();
        });
        req.end(`SELECT 1 WHERE ${where}`);
      });
    },
    'slow body': () =>
      new Promise<void>((done) => {
        count('slow body');
        const req = request(
          `${sqlUrl}/`,
          { method: 'POST', headers: { 'Content-Length': '100000' } },
          (res) => {
            answered('slow body', res.statusCode);
            res.resume();
            res.on('end', () => done());
          },
        );
        req.on('error', () => {
          answered('slow body', undefined);
          done();
        });
        req.write('S');
        const drip = setInterval(() => req.write(' '), 1000);
        req.on('close', () => {
          clearInterval(drip);
          done();
        });
      }),
    'slow reader': () =>
      new Promise<void>((done) => {
        count('slow reader');
        const req = request(
          `${sqlUrl}/?query=${encodeURIComponent("SELECT number, repeat('x', 100) FROM numbers(1000000)")}`,
          (res) => {
            answered('slow reader', res.statusCode);
            res.pause();
            res.socket.once('close', () => done());
            // The server cuts a client that takes nothing for sql.http.clientTimeoutMs; a paused
            // socket may not see it, so the loop goes on after a bound either way.
            setTimeout(() => {
              req.destroy();
              done();
            }, 15_000);
          },
        );
        req.on('error', () => {
          answered('slow reader', undefined);
          done();
        });
        req.end();
      }),
  };
  const picked = Object.entries(loops).filter(([name]) => only.length === 0 || only.includes(name));
  const workers = picked.map(async ([, fn]) => {
    while (running) await fn();
  });
  return {
    sent,
    answers,
    stop: async () => {
      running = false;
      await Promise.all(workers);
    },
  };
}

async function analystMain(sqlUrl: string, only: string): Promise<void> {
  const analyst = worstAnalyst(sqlUrl, only ? only.split(',') : []);
  process.stdout.write('LOOPING\n');
  process.stdin.resume();
  await new Promise<void>((r) => process.stdin.once('end', () => r()));
  // The loops in flight end within their bounds (a slow body at its deadline, a reader at 15 s).
  await analyst.stop();
  process.stdout.write(`SENT ${JSON.stringify({ sent: analyst.sent, answers: analyst.answers })}\n`, () =>
    process.exit(0),
  );
}

analystMain(process.argv[2], process.argv[3] ?? '').catch((err) => {
  console.error(err);
  process.exit(1);
});
