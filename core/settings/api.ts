/**
 * The HTTP API's settings: where it listens, the request body limit, the response cache
 * (api/http/cache.ts), rate limiting (api/http/ratelimit.ts), readiness and build-tx.
 */
import { z } from 'zod';

/** The `api` section. */
export const apiSchema = z
  .object({
    host: z.string().default('127.0.0.1').describe('Listen address of the HTTP API.'),
    port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .default(3000)
      .describe('Listen port of the HTTP API (0: any free port).'),
    thread: z
      .enum(['worker', 'main'])
      .default('worker')
      .describe(
        "Where the API runs in `vaultstream start` / `api`: `worker`, a thread of its own whose event loop serves only requests (api/thread/host.ts; the store, ingesters, consumers and settle stay on the main thread); `main`, the main thread's one event loop with everything else.",
      ),
    pipelineNice: z
      .number()
      .int()
      .min(0)
      .max(19)
      .default(10)
      .describe(
        "With `thread: worker`, on Linux: the nice value the rest of the process (the ingesters, consumers, settle, chDB's threads) and the embedded devnet's nodes take once the API thread listens, so that when both want a core a request goes first and the pipeline, whose work can wait a few ms, after (core/priority.ts). 0: all at the process's own priority.",
      ),
    bodyLimitBytes: z
      .number()
      .int()
      .min(256)
      .max(10_485_760)
      .default(65_536)
      .describe('Largest accepted JSON request body, in bytes (larger bodies are a 400 BAD_BODY).'),
    cache: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe(
            'Cache answers per data version (single flight: a burst of identical requests costs one query).',
          ),
        maxBytes: z
          .number()
          .int()
          .min(0)
          .default(67_108_864)
          .describe('Bound of the response cache: serialized bodies plus their compressed variants.'),
        ttlSeconds: z
          .number()
          .int()
          .min(0)
          .max(86_400)
          .default(60)
          .describe('Longest time an entry is served for one data version (time-relative defaults move on).'),
        maxAgeSeconds: z
          .number()
          .int()
          .min(0)
          .max(86_400)
          .default(5)
          .describe('`Cache-Control: max-age` of cached responses.'),
        staleWhileRevalidateSeconds: z
          .number()
          .int()
          .min(0)
          .max(86_400)
          .default(30)
          .describe(
            "`Cache-Control: stale-while-revalidate` of cached responses; also the server's own grace: an answer past `ttlSeconds` (same data version) is served this long while one reload replaces it.",
          ),
        maxStaleMs: z
          .number()
          .int()
          .min(0)
          .max(600_000)
          .default(2000)
          .describe(
            "When new data lands, the previous data version's answer of a key is served while the new one is computed in the background, at most this long after that version was last seen current (ms): the bound on an answer's staleness. 0: a new version's requests wait.",
          ),
        versionIntervalMs: z
          .number()
          .int()
          .min(0)
          .max(60_000)
          .default(1000)
          .describe(
            'New data becomes visible to the API at most this often (ms): each new data version costs every hot endpoint one recompute, and on a live chain batches land several times a second. 0: every landed batch at once (api/data-version.ts).',
          ),
        compressMinBytes: z
          .number()
          .int()
          .min(0)
          .default(1024)
          .describe('Bodies smaller than this are sent uncompressed.'),
        maxUncachedPerClient: z
          .number()
          .int()
          .min(1)
          .max(10_000)
          .default(4)
          .describe('Cache misses (store loads) one client may have running at once; more are a 429.'),
      })
      .prefault({}),
    rateLimit: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe('On by default; loopback clients (127.0.0.0/8, ::1) are exempt unless `limitLoopback`.'),
        limitLoopback: z
          .boolean()
          .default(false)
          .describe('Also limit loopback clients (off: local tools and the devnet are never limited).'),
        rps: z
          .number()
          .positive()
          .max(1_000_000)
          .default(20)
          .describe('Sustained requests per second per client (token refill rate).'),
        burst: z
          .number()
          .int()
          .min(1)
          .max(1_000_000)
          .default(40)
          .describe('Bucket size: requests a client may send at once.'),
        header: z
          .string()
          .default('')
          .describe('Header naming the client (e.g. `x-forwarded-for` behind a proxy); empty = the peer IP.'),
        maxClients: z
          .number()
          .int()
          .min(1)
          .default(100_000)
          .describe('Clients tracked at most; the least recently seen are forgotten first.'),
      })
      .prefault({}),
    readiness: z
      .object({
        maxLagSeconds: z
          .number()
          .int()
          .min(1)
          .max(86_400)
          .default(60)
          .describe("`/readyz` is 503 when a chain's stored watermark is further behind its head than this."),
        maxConsumerLag: z
          .number()
          .int()
          .min(0)
          .max(100_000_000)
          .default(1000)
          .describe(
            'Kafka bus: `/readyz` is 503 while the consumer group is more than this many messages behind on a topic (summed over its partitions), and, in a process running the consumers, until they have stored what was published before they started and the metrics tables have settled it.',
          ),
      })
      .prefault({}),
    buildTx: z
      .object({
        timeoutMs: z
          .number()
          .int()
          .min(100)
          .max(120_000)
          .default(5000)
          .describe("Longest time POST /auto-claim/build-tx waits on a chain's RPC before answering 503."),
      })
      .prefault({}),
    maxSourceErrorsPerVault: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .default(100)
      .describe(
        'Most recent data-source errors listed per vault by apy-history (`errorsTotal` counts them all).',
      ),
    events: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe(
            'Serve GET /v1/events, the server-sent events of each new data version and activity row.',
          ),
        maxClients: z
          .number()
          .int()
          .min(1)
          .max(100_000)
          .default(1000)
          .describe(
            'Event streams open at once; one more is answered 503 TOO_MANY_STREAMS with Retry-After.',
          ),
        maxClientsPerAddress: z
          .number()
          .int()
          .min(1)
          .max(100_000)
          .default(16)
          .describe(
            'Event streams one client (api.rateLimit.header, else its IP) may hold open; loopback clients are exempt unless api.rateLimit.limitLoopback.',
          ),
        replayVersions: z
          .number()
          .int()
          .min(1)
          .max(100_000)
          .default(1000)
          .describe(
            'Data versions kept for a reconnecting client (Last-Event-ID): an older id gets one `reset` event.',
          ),
        replayBytes: z
          .number()
          .int()
          .min(65_536)
          .max(1_073_741_824)
          .default(8_388_608)
          .describe(
            'Bound of the bytes those kept versions hold (their events as sent); the oldest go first.',
          ),
        clientBufferBytes: z
          .number()
          .int()
          .min(1024)
          .max(67_108_864)
          .default(262_144)
          .describe(
            'Bytes of events held for one client whose connection takes no more (it does not read); past it the client is dropped, and nothing it does holds anyone else.',
          ),
        heartbeatSeconds: z
          .number()
          .int()
          .min(1)
          .max(3600)
          .default(15)
          .describe('A comment line is sent this often, so proxies and clients see the stream alive.'),
        retryMs: z
          .number()
          .int()
          .min(100)
          .max(600_000)
          .default(3000)
          .describe('The `retry:` a client is told to wait before it reconnects.'),
      })
      .prefault({}),
  })
  .prefault({});
