import type { KeyUsage } from '@/components/portal/trpc'

/** The status classes as drawn, bottom to top, with their colours and words; a 429 by the limit that refused it. */
export const USAGE_CLASSES = [
  { name: 'ok', label: '2xx', color: 'var(--ok)' },
  { name: 'client_error', label: '4xx', color: 'var(--warn)' },
  { name: 'rate_limited', label: '429 key limit', color: 'var(--accent)' },
  { name: 'rate_limited_ip', label: '429 IP limit', color: 'var(--accent-strong)' },
  { name: 'server_error', label: '5xx', color: 'var(--bad)' },
] as const

const WIDTH = 672
const HEIGHT = 120
/** 168 hours in 672 units: 4 per bar, 3 drawn and 1 of gap. */
const BAR = WIDTH / 168

type Hour = KeyUsage['hours'][number]
/** Every request of the hour, whatever its answer. */
export const requestsIn = (h: Hour) => USAGE_CLASSES.reduce((n, c) => n + h[c.name], 0)

/**
 * Requests per hour over the last 7 days as stacked bars (an SVG, no chart
 * library). The picture is one image with a summary as its name; the numbers
 * themselves are in the totals and the table next to it (UsagePanel).
 */
export function UsageChart({ usage, label }: { usage: KeyUsage; label: string }) {
  const peak = Math.max(1, ...usage.hours.map(requestsIn))
  return (
    <svg
      className="usage-chart"
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      preserveAspectRatio="none"
      role="img"
      aria-label={label}
      data-testid="usage-chart"
    >
      <line x1={0} x2={WIDTH} y1={HEIGHT - 0.5} y2={HEIGHT - 0.5} stroke="var(--border-strong)" />
      {usage.hours.map((h, i) => {
        let y = HEIGHT
        return (
          <g key={h.hour}>
            {USAGE_CLASSES.map((c) => {
              const count = h[c.name]
              if (count === 0) return null
              const height = (count / peak) * (HEIGHT - 4)
              y -= height
              return (
                <rect key={c.name} x={i * BAR} y={y} width={BAR - 1} height={height} fill={c.color}>
                  <title>{`${new Date(h.hour).toUTCString()}: ${count} ${c.label}`}</title>
                </rect>
              )
            })}
          </g>
        )
      })}
    </svg>
  )
}
