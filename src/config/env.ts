/**
 * The configuration contract (environment variables), validated once at
 * start-up. A bad value stops the process with one line naming the variable.
 * Every process (start orchestrator, web, indexer, CLI) reads config here and
 * nowhere else.
 */
import { z } from 'zod'

const port = z.coerce
  .number({ error: 'must be an integer from 1 to 65535' })
  .int('must be an integer from 1 to 65535')
  .min(1, 'must be an integer from 1 to 65535')
  .max(65535, 'must be an integer from 1 to 65535')

const nonNegativeInt = z.coerce
  .number({ error: 'must be a non-negative integer' })
  .int('must be a non-negative integer')
  .min(0, 'must be a non-negative integer')

/**
 * An @ after the end of the authority (the first / ? or # after `scheme://`) is a
 * password holding one of those unescaped: the URL is cut there, and its "host" would
 * be the user name and the start of the password. Such a value is refused and never
 * shown. Checked before the URL's own shape, so that its message is the one given.
 */
const UNESCAPED_USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*[/?#][^,]*@/i
const ESCAPED_USERINFO = {
  check: (v: string) => v.split(',').every((u) => !UNESCAPED_USERINFO.test(u.trim())),
  message: 'must percent-encode any / ? # @ in a user name or password',
}

const httpUrl = z
  .string()
  .trim()
  .refine(ESCAPED_USERINFO.check, ESCAPED_USERINFO.message)
  .refine((v) => /^https?:\/\/[^\s]+$/.test(v) && URL.canParse(v), 'must be an http(s) URL')

/**
 * A URL the service publishes (PUBLIC_URL, MEDIA_ORIGIN): every NFT's media_url, the OpenAPI
 * server, the SIWE message's URI, NEXTAUTH_URL and the start-up log lines are built from it.
 * So no user name or password (they would go out in clear to every client and every log), and
 * no query or fragment (every link is appended to it, and would land inside them). A path is
 * allowed; a trailing / is dropped.
 */
const originUrl = httpUrl.refine((v) => {
  if (/[?#]/.test(v)) return false
  if (!URL.canParse(v)) return true // refused above, as not an http(s) URL
  const url = new URL(v)
  return url.username === '' && url.password === '' && !/^https?:\/\/[^/]*@/i.test(v)
}, 'must be an origin like https://nft.example.com: no user name or password, query or fragment')

/** One http(s) URL, or several separated by commas (RPC_URL: the indexer fails over between them). */
const httpUrlList = z
  .string()
  .trim()
  .refine(ESCAPED_USERINFO.check, ESCAPED_USERINFO.message)
  .refine((v) => {
    const urls = v.split(',').map((u) => u.trim())
    return urls.length <= 16 && urls.every((u) => /^https?:\/\/[^\s,]+$/.test(u) && URL.canParse(u))
  }, 'must be an http(s) URL, or up to 16 separated by commas')

const postgresUrl = z
  .string()
  .trim()
  .refine(ESCAPED_USERINFO.check, ESCAPED_USERINFO.message)
  .refine((v) => /^postgres(ql)?:\/\//.test(v) && URL.canParse(v), 'must be a postgres:// URL')

/** One postgres:// URL, or several separated by commas (DATABASE_READ_URL: streaming replicas). */
const postgresUrlList = z
  .string()
  .trim()
  .refine(ESCAPED_USERINFO.check, ESCAPED_USERINFO.message)
  .refine((v) => {
    const urls = v.split(',').map((u) => u.trim())
    return urls.length <= 16 && urls.every((u) => /^postgres(ql)?:\/\/[^\s,]+$/.test(u) && URL.canParse(u))
  }, 'must be a postgres:// URL, or up to 16 separated by commas')

const redisUrl = z
  .string()
  .trim()
  .refine(ESCAPED_USERINFO.check, ESCAPED_USERINFO.message)
  .refine((v) => /^rediss?:\/\//.test(v) && URL.canParse(v), 'must be a redis:// URL')

/** Empty strings count as unset, so `FOO= npm start` behaves like no FOO. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional())

/**
 * A rate-limit profile written `sec=5,min=300,concurrent=10`: requests per
 * second, requests per minute and requests in flight; any part may be left out.
 */
const rateLimitProfile = z
  .string()
  .trim()
  .regex(
    /^(sec|min|concurrent)=[1-9][0-9]{0,8}(,(sec|min|concurrent)=[1-9][0-9]{0,8})*$/,
    'must look like "sec=5,min=300,concurrent=10"',
  )
  .transform((v) => {
    const parts = Object.fromEntries(v.split(',').map((p) => p.split('=') as [string, string]))
    return {
      perSecond: parts.sec ? Number(parts.sec) : undefined,
      perMinute: parts.min ? Number(parts.min) : undefined,
      concurrent: parts.concurrent ? Number(parts.concurrent) : undefined,
    }
  })

export type RateLimitProfile = z.infer<typeof rateLimitProfile>

/** AUTH_SECRET's minimum length; the secret `npm start` generates into DATA_DIR is held to it too. */
export const AUTH_SECRET_MIN_LENGTH = 32

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export const envSchema = z.object({
  PORT: optional(port).default(3000),
  /**
   * Prometheus metrics (docs/operations.md, "Metrics"): the web process serves them on this
   * port, the indexer on the next one (METRICS_PORT + 1). Unset: no metrics at all.
   */
  METRICS_PORT: optional(port.max(65534, 'must be at most 65534 (the indexer uses METRICS_PORT + 1)')),
  /** Interface the metrics ports listen on; loopback by default (the scraper runs beside the service). */
  METRICS_HOST: optional(
    z.string().regex(/^[A-Za-z0-9.:-]{1,253}$/, 'must be a host name or an IP address like 127.0.0.1'),
  ).default('127.0.0.1'),
  PUBLIC_URL: optional(originUrl),
  DATABASE_URL: optional(postgresUrl),
  /** Streaming replicas of DATABASE_URL that serve the /v1 reads (docs/operations.md, "Read replicas"). */
  DATABASE_READ_URL: optional(postgresUrlList),
  /** A replica further behind the primary than this many seconds serves no read. */
  DATABASE_READ_MAX_LAG_S: optional(
    nonNegativeInt.min(1, 'must be at least 1').max(3600, 'must be at most 3600'),
  ).default(5),
  REDIS_URL: optional(redisUrl),
  RPC_URL: optional(httpUrlList),
  NETWORK: optional(
    z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be a lowercase chain name like "mainnet"'),
  ).default('devnet'),
  CHAIN_ID: optional(z.coerce.number({ error: 'must be a positive integer' }).int().positive()).default(
    31337,
  ),
  START_BLOCK: optional(nonNegativeInt).default(0),
  CONFIRMATIONS: optional(nonNegativeInt.max(1000, 'must be at most 1000')),
  /** One gateway, or several separated by commas: tried in order while one fails. */
  IPFS_GATEWAY: optional(httpUrlList).default('https://ipfs.io/ipfs/'),
  ARWEAVE_GATEWAY: optional(httpUrlList).default('https://arweave.net/'),
  AUTH_SECRET: optional(
    z.string().min(AUTH_SECRET_MIN_LENGTH, `must be at least ${AUTH_SECRET_MIN_LENGTH} characters`),
  ),
  TRUST_PROXY: optional(nonNegativeInt.max(10, 'must be at most 10')).default(0),
  MEDIA_ORIGIN: optional(originUrl),
  MEDIA_DIR: optional(z.string()),
  DATA_DIR: optional(z.string()).default('.data'),
  /** host:port pairs the metadata fetcher may reach although they are private (the devnet's own helper). */
  FETCH_ALLOW_HOSTS: optional(
    z.string().regex(/^[^\s,]+(,[^\s,]+)*$/, 'must be a comma-separated list of host:port'),
  ),
  /** host:port pairs webhook endpoints may reach although they are private (docs/push.md, "Webhooks"). */
  WEBHOOK_ALLOW_HOSTS: optional(
    z.string().regex(/^[^\s,]+(,[^\s,]+)*$/, 'must be a comma-separated list of host:port'),
  ),
  /** Wait after a webhook's first failed attempt (ms); later waits grow from it (docs/push.md, "Retries"). */
  WEBHOOK_RETRY_BASE_MS: optional(
    nonNegativeInt.min(100, 'must be at least 100').max(3_600_000, 'must be at most 3600000'),
  ).default(10_000),
  /**
   * `development` under `npm run dev`; `npm start` runs its processes with `production`, which
   * skips the /v1 response parse (docs/api.md, "The request path, and what it costs").
   */
  NODE_ENV: optional(z.string()),
  /**
   * Set by `npm start` for the processes it starts, never by an operator: `1` when they run on
   * its embedded devnet, whose development wallet the portal may offer (docs/portal.md).
   */
  NFT_EMBEDDED_DEVNET: optional(z.enum(['0', '1'], { error: 'must be 0 or 1 (set by npm start)' })),
  LOG_LEVEL: optional(z.enum(levels, { error: `must be one of ${levels.join(', ')}` })).default('info'),
  /** Upper bound of any single API query, so a hostile request can never run long. */
  DB_STATEMENT_TIMEOUT_MS: optional(nonNegativeInt.min(100, 'must be at least 100')).default(5000),
  /** Connections of the web process's API pool; one client may use half of them at once (docs/auth.md). */
  DB_POOL_SIZE: optional(
    nonNegativeInt.min(2, 'must be at least 2').max(1000, 'must be at most 1000'),
  ).default(10),
  /** Limits of a portal API key (spec: 5/s, 300/min, 10 concurrent). */
  RATE_LIMIT_KEY: optional(rateLimitProfile).default({ perSecond: 5, perMinute: 300, concurrent: 10 }),
  /** Limits of a demo token (spec: 1/s, 30/min, 2 concurrent). */
  RATE_LIMIT_DEMO: optional(rateLimitProfile).default({ perSecond: 1, perMinute: 30, concurrent: 2 }),
  /** Per client IP for requests that present a portal key (or no valid credential); default RATE_LIMIT_KEY. */
  RATE_LIMIT_IP_KEY: optional(rateLimitProfile),
  /** Per client IP for requests that present a demo token; default RATE_LIMIT_DEMO. */
  RATE_LIMIT_IP_DEMO: optional(rateLimitProfile),
  /** Demo-token issuance per client IP (spec: 5 per minute). */
  RATE_LIMIT_DEMO_ISSUE: optional(rateLimitProfile).default({
    perSecond: undefined,
    perMinute: 5,
    concurrent: undefined,
  }),
  /** The portal's procedures (/api/trpc), per signed-in user and, with the same numbers, per client IP. */
  RATE_LIMIT_PORTAL: optional(rateLimitProfile).default({ perSecond: 10, perMinute: 300, concurrent: 4 }),
  /** The public media path, per client IP. */
  RATE_LIMIT_MEDIA: optional(rateLimitProfile).default({ perSecond: 50, perMinute: 1500, concurrent: 20 }),
  /** Lifetime of a concurrency slot: a crashed process's slots come back after this long. */
  RATE_LIMIT_LEASE_MS: optional(nonNegativeInt.min(1000, 'must be at least 1000')).default(30_000),
  /**
   * Upper bound of one rate-limiter (Redis) command; slower counts as unavailable (503).
   * A refused connection fails at once whatever this says; the bound is for a Redis that
   * hangs. Not lower than event-loop stalls under load, or healthy requests get 503.
   */
  RATE_LIMIT_TIMEOUT_MS: optional(
    nonNegativeInt.min(10, 'must be at least 10').max(5000, 'must be at most 5000'),
  ).default(1000),
  /** Prefix of every Redis key this service writes (several deployments can share one Redis). */
  REDIS_KEY_PREFIX: optional(
    z.string().regex(/^[A-Za-z0-9:_.-]{0,32}$/, 'must be up to 32 of A-Z a-z 0-9 : _ . -'),
  ).default('nft:'),
  /** How long a process may trust a verified credential without asking the database (≤ 1 s: the revocation bound). */
  CREDENTIAL_CACHE_MS: optional(nonNegativeInt.max(1000, 'must be at most 1000')).default(500),
  /** First and largest eth_getLogs span, for providers with a hard block-range cap; adaptive when unset. */
  INDEXER_RANGE_BLOCKS: optional(nonNegativeInt.min(1, 'must be a positive integer')),
  /** Events merged into one backfill commit; a tuning default when unset. */
  INDEXER_COMMIT_EVENTS: optional(nonNegativeInt.min(1, 'must be a positive integer')),
  /** Second, independent read of every block's logs before it counts as confirmed (docs/indexer.md, "Verification"). */
  INDEXER_VERIFY: optional(z.enum(['on', 'off'], { error: 'must be on or off' })).default('on'),
  /** Share of backfill blocks proven by receipts on top of agreeing reads (docs/indexer.md, "Verification"). */
  INDEXER_PROOF_SAMPLE_RATE: optional(
    z.coerce
      .number({ error: 'must be a number from 0 to 1' })
      .min(0, 'must be from 0 to 1')
      .max(1, 'must be from 0 to 1'),
  ).default(0.01),
  /** Metadata and media requests in flight over all hosts (docs/metadata.md, "Fair scheduling"). */
  METADATA_CONCURRENCY: optional(
    nonNegativeInt.min(1, 'must be a positive integer').max(4096, 'must be at most 4096'),
  ).default(64),
  /** Requests in flight to one metadata host. */
  METADATA_HOST_CONCURRENCY: optional(
    nonNegativeInt.min(1, 'must be a positive integer').max(256, 'must be at most 256'),
  ).default(4),
  /** Requests in flight to one configured IPFS or Arweave gateway. */
  METADATA_GATEWAY_CONCURRENCY: optional(
    nonNegativeInt.min(1, 'must be a positive integer').max(1024, 'must be at most 1024'),
  ).default(32),
  /** Upper bound of one JSON-RPC HTTP request; a hung request is cut and retried. */
  RPC_TIMEOUT_MS: optional(
    nonNegativeInt.min(500, 'must be at least 500').max(120_000, 'must be at most 120000'),
  ).default(15_000),
})

export type Env = z.infer<typeof envSchema>

export interface Config
  extends Omit<
    Env,
    'CONFIRMATIONS' | 'PUBLIC_URL' | 'FETCH_ALLOW_HOSTS' | 'WEBHOOK_ALLOW_HOSTS' | 'MEDIA_DIR'
  > {
  PUBLIC_URL: string
  CONFIRMATIONS: number
  MEDIA_DIR: string
  FETCH_ALLOW_HOSTS: string[]
  WEBHOOK_ALLOW_HOSTS: string[]
  /** No DATABASE_URL: the embedded PGlite database is (or will be) used. */
  embeddedDatabase: boolean
  /** No RPC_URL: the embedded anvil devnet is (or will be) used. */
  embeddedChain: boolean
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    readonly reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`)
    this.name = 'ConfigError'
  }
}

/** Variables whose value is a URL: it may carry a password (userinfo) or an API key (path, query). */
const URL_VARIABLES = new Set([
  'PUBLIC_URL',
  'DATABASE_URL',
  'DATABASE_READ_URL',
  'REDIS_URL',
  'RPC_URL',
  'IPFS_GATEWAY',
  'ARWEAVE_GATEWAY',
  'MEDIA_ORIGIN',
])

/**
 * What a start-up error may say about a bad value: start-up lines end up in
 * terminals, CI logs and log collectors, so a secret is never shown — a URL at
 * most as scheme and host, AUTH_SECRET not at all.
 */
function describeValue(variable: string, raw: string | undefined): string {
  if (raw === undefined) return 'got null'
  if (variable === 'AUTH_SECRET') return 'the value is not shown'
  if (URL_VARIABLES.has(variable)) {
    // Only a URL that parses has a known host; anything else may be a secret cut in two.
    if (!URL.canParse(raw.trim())) return 'the value is not shown'
    const url = new URL(raw.trim())
    if (!ESCAPED_USERINFO.check(raw)) return 'the value is not shown'
    return `got ${url.protocol}//${url.host}, the rest is not shown`
  }
  return `got ${JSON.stringify(raw)}`
}

/** Validates an environment; throws ConfigError naming the first bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = envSchema.safeParse(env)
  if (!result.success) {
    const issue = result.error.issues[0]!
    const variable = String(issue.path[0] ?? 'environment')
    throw new ConfigError(variable, `${issue.message} (${describeValue(variable, env[variable])})`)
  }
  const e = result.data
  if (e.DATABASE_READ_URL !== undefined && e.DATABASE_URL === undefined) {
    throw new ConfigError('DATABASE_READ_URL', 'needs DATABASE_URL: replicas are replicas of that primary')
  }
  if (e.METRICS_PORT !== undefined && (e.METRICS_PORT === e.PORT || e.METRICS_PORT + 1 === e.PORT)) {
    // The public port must never serve metrics: they describe traffic, keys' policies, the database.
    throw new ConfigError(
      'METRICS_PORT',
      `must differ from PORT, and so must METRICS_PORT + 1 (the indexer's) (got ${e.METRICS_PORT}, PORT ${e.PORT})`,
    )
  }
  const embeddedChain = e.RPC_URL === undefined
  return {
    ...e,
    PUBLIC_URL: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    // The devnet mines a block every second or two: 2 confirmations keep its
    // pages fresh; a real chain gets the customary 12.
    CONFIRMATIONS: e.CONFIRMATIONS ?? (embeddedChain ? 2 : 12),
    MEDIA_DIR: e.MEDIA_DIR ?? `${e.DATA_DIR}/media`,
    FETCH_ALLOW_HOSTS: e.FETCH_ALLOW_HOSTS?.split(',') ?? [],
    WEBHOOK_ALLOW_HOSTS: e.WEBHOOK_ALLOW_HOSTS?.split(',') ?? [],
    embeddedDatabase: e.DATABASE_URL === undefined,
    embeddedChain,
  }
}

/**
 * Whether NODE_ENV is `production`, for code that runs when its module loads, before any
 * Config exists (the /v1 response schemas, src/server/api/internals/response-schema.ts).
 * The same variable and rule as Config.NODE_ENV.
 */
export function productionMode(env: Record<string, string | undefined> = process.env): boolean {
  return envSchema.shape.NODE_ENV.parse(env.NODE_ENV) === 'production'
}

/**
 * Loads the configuration of this process, or prints one clear line and exits
 * with code 2. Meant for process entry points only; library code takes a Config.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  try {
    return parseConfig(env)
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`)
      process.exit(2)
    }
    throw err
  }
}
