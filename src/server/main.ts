/**
 * Entry point of the web process (started by `npm start`). Serves /v1, the
 * OpenAPI document and the Next.js portal on PORT.
 */
import { loadConfig } from '@/config/env'
import { portRefusal } from '@/config/listen-port'
import { captureConsole, createLogger } from '@/config/logger'
import { type MetricsEndpoint, metricsPort, serveMetrics } from '@/config/metrics-endpoint'
import { STOP_SIGNALS } from '@/config/stop-signals'
import { createJournalListener } from '@/server/push/journal-listener'
import { DEFAULT_RETRY_SCHEDULE } from '@/server/push/webhooks/schedule'
import { WebhookDelivery } from '@/server/push/webhooks/webhook-delivery'
import { closeWebServices, createWebServices } from '@/server/services/web-services'
import { createWebServer } from '@/server/web-server'

const config = loadConfig()
const logger = createLogger({ level: config.LOG_LEVEL, name: 'web' })
// What libraries print with console becomes log records too (docs/operations.md, "Logs").
captureConsole(logger)
if (!config.DATABASE_URL) {
  logger.fatal(
    'DATABASE_URL is not set: start the service with `npm start`, which provides the embedded database',
  )
  process.exit(2)
}
// The process's one set of services, shared by the REST layer and Next.js.
const services = createWebServices(config, { logger })
// One LISTEN connection per process wakes both live streams and webhook delivery (docs/push.md).
const journalListener = createJournalListener(services.db, { network: config.NETWORK, logger })
const web = await createWebServer({
  services,
  rest: { stream: { listener: journalListener } },
  // `--api-only`: no portal, so no portal build (the tests' web processes, src/test/web-process.ts).
  next: process.argv.includes('--api-only') ? false : { dev: config.NODE_ENV === 'development' },
})
// Webhook delivery runs in every web process; pg-boss's locking and the endpoints' row locks
// share the work between them (docs/push.md, "Where delivery runs"). Started in the background:
// the server listens meanwhile, and a queue that cannot start leaves the feature off, said once.
let webhooks: WebhookDelivery | undefined
if (services.webhooks) {
  const delivery = new WebhookDelivery({
    db: services.db,
    connectionString: config.DATABASE_URL,
    network: config.NETWORK,
    settings: services.webhooks,
    retry: { ...DEFAULT_RETRY_SCHEDULE, baseMs: config.WEBHOOK_RETRY_BASE_MS },
    logger: logger.child({ component: 'webhooks' }),
    metrics: services.metrics,
  })
  webhooks = delivery
  delivery.start().then(
    () => {
      logger.debug('webhook delivery started')
      journalListener.subscribe({ journal: () => delivery.wake(), head: () => delivery.wake() })
    },
    (err) => {
      logger.warn({ err }, 'webhook delivery is off: its job queue (pg-boss) could not start')
      webhooks = undefined
      void delivery.stop().catch(() => {})
    },
  )
}
web.server.listen(config.PORT, () =>
  logger.info({ port: config.PORT, url: config.PUBLIC_URL }, 'web server listening'),
)
web.server.on('error', (err: NodeJS.ErrnoException) => {
  const refusal = portRefusal(err, config.PORT, 'PORT')
  // A taken port is the operator's to fix: one line and exit 2, which `npm start` does not restart.
  if (refusal) logger.fatal(refusal)
  else logger.fatal({ err }, 'web server failed')
  process.exit(refusal ? 2 : 1)
})
// Prometheus metrics on their own port, never PORT (docs/operations.md, "Metrics").
const port = metricsPort(config, 'web')
let metricsEndpoint: MetricsEndpoint | undefined
if (services.metrics && port !== undefined) {
  metricsEndpoint = await serveMetrics({
    registry: services.metrics.registry,
    port,
    host: config.METRICS_HOST,
    logger,
  }).catch((err: NodeJS.ErrnoException) => {
    const refusal = portRefusal(err, port, 'METRICS_PORT')
    if (refusal) logger.fatal(refusal)
    else logger.fatal({ err, port }, 'metrics port unavailable')
    process.exit(refusal ? 2 : 1)
  })
}

let stopping = false
async function stop(signal: string) {
  if (stopping) return
  stopping = true
  logger.info({ signal }, 'web server stopping')
  const force = setTimeout(() => process.exit(1), 10_000)
  force.unref()
  await web.close().catch(() => {})
  await webhooks?.stop().catch(() => {})
  await journalListener.close().catch(() => {})
  await metricsEndpoint?.close().catch(() => {})
  await closeWebServices(services).catch(() => {})
  process.exit(0)
}
// In-flight requests finish on each of them, SIGHUP (a closed terminal) included.
for (const signal of STOP_SIGNALS) process.on(signal, () => void stop(signal))
