/**
 * The web metrics' exposition: cells recorded on the request path come out as
 * Prometheus samples — cumulative histogram buckets, sums, counts, counters by
 * label set — and the pool gauges are read at scrape time.
 */
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { WebMetrics } from './web-metrics'

describe('WebMetrics', () => {
  it('exports request histograms with cumulative buckets, and counters by label set', async () => {
    const pool = new pg.Pool({ max: 7 })
    const metrics = new WebMetrics(pool)
    for (const seconds of [0.0005, 0.003, 0.2, 20])
      metrics.request('/v1/collections/{address}', 'GET', 200, seconds)
    metrics.request('/v1/collections/{address}', 'GET', 404, 0.002)
    metrics.limitDecision('ipKey', 'ip', true)
    metrics.limitDecision('ipKey', 'ip', true)
    metrics.limitDecision('key', 'credential', false)
    metrics.credentialCache(false)
    metrics.credentialCache(true)
    metrics.credentialCache(true)
    metrics.webhookAttempt(true)
    metrics.webhookAttempt(false)
    metrics.webhookAttempt(false)
    metrics.webhookEndpointDisabled()
    const text = await metrics.registry.metrics()
    const series = '{route="/v1/collections/{address}",method="GET",status="200"'
    const bucket = (le: string) =>
      text
        .split('\n')
        .find((l) => l.startsWith(`nft_http_request_duration_seconds_bucket${series},le="${le}"}`))
    expect(text).toContain('# TYPE nft_http_request_duration_seconds histogram')
    expect(bucket('0.001')).toMatch(/ 1$/)
    expect(bucket('0.0025')).toMatch(/ 1$/)
    expect(bucket('0.005')).toMatch(/ 2$/)
    expect(bucket('0.25')).toMatch(/ 3$/)
    expect(bucket('10')).toMatch(/ 3$/)
    expect(bucket('+Inf')).toMatch(/ 4$/)
    expect(text).toContain(`nft_http_request_duration_seconds_sum${series}} 20.2035\n`)
    expect(text).toContain(`nft_http_request_duration_seconds_count${series}} 4\n`)
    expect(text).toContain(
      'nft_http_request_duration_seconds_count{route="/v1/collections/{address}",method="GET",status="404"} 1\n',
    )
    expect(text).toContain('# TYPE nft_ratelimit_decisions_total counter')
    expect(text).toContain('nft_ratelimit_decisions_total{policy="ipKey",scope="ip",decision="allowed"} 2\n')
    expect(text).toContain(
      'nft_ratelimit_decisions_total{policy="key",scope="credential",decision="refused"} 1\n',
    )
    expect(text).toContain('nft_credential_cache_total{result="hit"} 2\n')
    expect(text).toContain('nft_credential_cache_total{result="miss"} 1\n')
    expect(text).toContain('nft_webhook_attempts_total{outcome="delivered"} 1\n')
    expect(text).toContain('nft_webhook_attempts_total{outcome="failed"} 2\n')
    expect(text).toContain('nft_webhook_endpoints_disabled_total 1\n')
    expect(text).toContain('nft_db_pool_max_connections 7\n')
    expect(text).toContain('nft_db_pool_connections 0\n')
    await pool.end()
  })

  it('reads the webhook slots at scrape time: zero until delivery has started', async () => {
    const pool = new pg.Pool()
    const metrics = new WebMetrics(pool)
    expect(await metrics.registry.metrics()).toContain(
      'nft_webhook_attempts_in_flight{endpoints="failing"} 0\n',
    )
    const slots = { inFlight: { proven: 3, untried: 2, failing: 1 }, held: 7 }
    metrics.webhookSlots(() => slots)
    slots.inFlight.proven = 4
    const text = await metrics.registry.metrics()
    expect(text).toContain('nft_webhook_attempts_in_flight{endpoints="proven"} 4\n')
    expect(text).toContain('nft_webhook_attempts_in_flight{endpoints="untried"} 2\n')
    expect(text).toContain('nft_webhook_attempts_in_flight{endpoints="failing"} 1\n')
    expect(text).toContain('nft_webhook_jobs_held 7\n')
    await pool.end()
  })
})
