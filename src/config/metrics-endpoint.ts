/**
 * The Prometheus endpoint both processes serve (docs/operations.md, "Metrics"):
 * GET /metrics on its own port — never the public PORT, which the
 * configuration check enforces — bound to METRICS_HOST (loopback by default).
 * The web process takes METRICS_PORT, the indexer METRICS_PORT + 1, so both
 * run side by side under `npm start`.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'
import type { Config } from './env'
import type { Logger } from './logger'

export type MetricsProcess = 'web' | 'indexer'

/** The metrics port of a process, or undefined when METRICS_PORT is unset (metrics are off). */
export function metricsPort(
  config: Pick<Config, 'METRICS_PORT'>,
  process: MetricsProcess,
): number | undefined {
  if (config.METRICS_PORT === undefined) return undefined
  return process === 'web' ? config.METRICS_PORT : config.METRICS_PORT + 1
}

export interface MetricsEndpoint {
  server: Server
  /** The port it listens on (the configured one, or the one the system chose for port 0). */
  port: number
  close(): Promise<void>
}

export interface MetricsEndpointOptions {
  registry: Registry
  port: number
  host: string
  /** Runs before each scrape: gauges read from the database are refreshed here, not per event. */
  beforeScrape?: () => Promise<void>
  logger?: Logger
}

/** Listens on host:port and answers GET /metrics with the registry in the Prometheus text format. */
export async function serveMetrics(options: MetricsEndpointOptions): Promise<MetricsEndpoint> {
  const { registry } = options
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
      res.end('Not found: metrics are at GET /metrics\n')
      return
    }
    try {
      await options.beforeScrape?.()
      const body = await registry.metrics()
      res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' })
      res.end(req.method === 'HEAD' ? undefined : body)
    } catch (err) {
      options.logger?.warn({ err }, 'metrics scrape failed')
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
      res.end('metrics unavailable\n')
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  options.logger?.info({ host: options.host, port }, 'metrics listening')
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
