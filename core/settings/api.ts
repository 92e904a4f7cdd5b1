/**
 * The HTTP API's settings: where it listens, the request body limit, the response cache
 * (api/http/cache.ts), rate limiting (api/http/ratelimit.ts), readiness and build-tx.
 */
import { z } from 'zod';

/** The `api` section. */
export const apiSchema = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(3000),
    /**
     * Where the API runs in `vaultstream start` / `api`: `worker`, a thread of its own whose event
     * loop serves only requests (api/thread/host.ts; the store, ingesters, consumers and settle stay
     * on the main thread); `main`, the main thread's one event loop with everything else.
     */
    thread: z.enum(['worker', 'main']).default('worker'),
    /**
     * With `thread: worker`, on Linux: the nice value the rest of the process (the ingesters,
     * consumers, settle, chDB's threads) and the embedded devnet's nodes take once the API thread
     * listens, so that when both want a core a request goes first and the pipeline, whose work can
     * wait a few ms, after (core/priority.ts). 0: all at the process's own priority.
     */
    pipelineNice: z.number().int().min(0).max(19).default(10),
    /** Largest accepted JSON request body, in bytes (larger bodies are a 400 BAD_BODY). */
    bodyLimitBytes: z.number().int().min(256).max(10_485_760).default(65_536),
    cache: z
      .object({
        enabled: z.boolean().default(true),
        /** Bound of the response cache: serialized bodies plus their compressed variants. */
        maxBytes: z.number().int().min(0).default(67_108_864),
        /** Longest time an entry is served for one data version (time-relative defaults move on). */
        ttlSeconds: z.number().int().min(0).max(86_400).default(60),
        /** `Cache-Control: max-age` of cached responses. */
        maxAgeSeconds: z.number().int().min(0).max(86_400).default(5),
        /**
         * `Cache-Control: stale-while-revalidate` of cached responses; also the server's own grace: an
         * answer past `ttlSeconds` (same data version) is served this long while one reload replaces it.
         */
        staleWhileRevalidateSeconds: z.number().int().min(0).max(86_400).default(30),
        /**
         * When new data lands, the previous data version's answer of a key is served while the new
         * one is computed in the background, at most this long after that version was last seen
         * current (ms): the bound on an answer's staleness. 0: a new version's requests wait.
         */
        maxStaleMs: z.number().int().min(0).max(600_000).default(2000),
        /**
         * New data becomes visible to the API at most this often (ms): each new data version costs
         * every hot endpoint one recompute, and on a live chain batches land several times a second.
         * 0: every landed batch at once (api/data-version.ts).
         */
        versionIntervalMs: z.number().int().min(0).max(60_000).default(1000),
        /** Bodies smaller than this are sent uncompressed. */
        compressMinBytes: z.number().int().min(0).default(1024),
        /** Cache misses (store loads) one client may have running at once; more are a 429. */
        maxUncachedPerClient: z.number().int().min(1).max(10_000).default(4),
      })
      .prefault({}),
    rateLimit: z
      .object({
        /** On by default; loopback clients (127.0.0.0/8, ::1) are exempt unless `limitLoopback`. */
        enabled: z.boolean().default(true),
        /** Also limit loopback clients (off: local tools and the devnet are never limited). */
        limitLoopback: z.boolean().default(false),
        /** Sustained requests per second per client (token refill rate). */
        rps: z.number().positive().max(1_000_000).default(20),
        /** Bucket size: requests a client may send at once. */
        burst: z.number().int().min(1).max(1_000_000).default(40),
        /** Header naming the client (e.g. `x-forwarded-for` behind a proxy); empty = the peer IP. */
        header: z.string().default(''),
        /** Clients tracked at most; the least recently seen are forgotten first. */
        maxClients: z.number().int().min(1).default(100_000),
      })
      .prefault({}),
    readiness: z
      .object({
        /** `/readyz` is 503 when a chain's stored watermark is further behind its head than this. */
        maxLagSeconds: z.number().int().min(1).max(86_400).default(60),
        /**
         * Kafka bus: `/readyz` is 503 while the consumer group is more than this many messages
         * behind on a topic (summed over its partitions), and, in a process running the consumers,
         * until they have stored what was published before they started and the metrics tables
         * have settled it.
         */
        maxConsumerLag: z.number().int().min(0).max(100_000_000).default(1000),
      })
      .prefault({}),
    buildTx: z
      .object({
        /** Longest time POST /auto-claim/build-tx waits on a chain's RPC before answering 503. */
        timeoutMs: z.number().int().min(100).max(120_000).default(5000),
      })
      .prefault({}),
    /** Most recent data-source errors listed per vault by apy-history (`errorsTotal` counts them all). */
    maxSourceErrorsPerVault: z.number().int().min(0).max(10_000).default(100),
  })
  .prefault({});
