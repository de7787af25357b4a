const pluralRules = new Intl.PluralRules('en')

/** "1 request", "2 requests": the count with its noun in the right number. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${pluralRules.select(count) === 'one' ? singular : pluralForm}`
}

/** m:ss of a duration, rounded up to the second. */
export function mmss(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000))
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}

/** Seconds to wait from Retry-After (or RateLimit-Reset): delta seconds or an HTTP date. */
export function retryAfterSeconds(headers: [string, string][], now = Date.now()): number | null {
  const get = (n: string) => headers.find(([k]) => k.toLowerCase() === n)?.[1]
  const value = get('retry-after') ?? get('ratelimit-reset')
  if (!value) return null
  const n = Number(value)
  if (Number.isFinite(n)) return Math.max(0, n)
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000))
}

/** The demo limits in words: "at most 1 request per second, 30 per minute and 2 at a time". */
export function describeLimits(limits: {
  requests_per_second: number
  requests_per_minute: number
  concurrent: number
}): string {
  return `at most ${plural(limits.requests_per_second, 'request')} per second, ${limits.requests_per_minute} per minute and ${limits.concurrent} at a time`
}
