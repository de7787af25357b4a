'use client'

import { useState } from 'react'
import { type ApiKeyView, errorMessage, type KeyUsage } from '@/components/portal/trpc'
import { RelativeTime } from '@/components/ui/time'
import { requestsIn, USAGE_CLASSES, UsageChart } from './usage-chart'
import { useKeyUsage } from './use-key-usage'

function summary(name: string, usage: KeyUsage): string {
  const counts = USAGE_CLASSES.map((c) => `${usage.totals[c.name]} ${c.label}`)
  return `Requests per hour of ${name} over the last 7 days: ${counts.join(', ')}.`
}

/** The hours with requests, as a table: the chart's text alternative. */
function UsageTable({ usage }: { usage: KeyUsage }) {
  const busy = usage.hours.filter((h) => requestsIn(h) > 0)
  if (busy.length === 0) return <p className="muted">No requests in the last 7 days.</p>
  return (
    <details>
      <summary>
        Requests per hour as a table ({busy.length} {busy.length === 1 ? 'hour' : 'hours'} with requests)
      </summary>
      <div className="table-wrap">
        <table className="data-table" data-testid="usage-table">
          <caption className="visually-hidden">Requests per hour (UTC)</caption>
          <thead>
            <tr>
              <th scope="col">Hour (UTC)</th>
              {USAGE_CLASSES.map((c) => (
                <th scope="col" key={c.name}>
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {busy.reverse().map((h) => (
              <tr key={h.hour}>
                <th scope="row">{h.hour.slice(0, 13).replace('T', ' ')}:00</th>
                {USAGE_CLASSES.map((c) => (
                  <td key={c.name}>{h[c.name]}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  )
}

/** Usage of one key, chosen in a select: a bar chart per hour, totals per status class, and the table. */
export function UsagePanel({ keys }: { keys: ApiKeyView[] }) {
  const [chosen, setChosen] = useState<string | undefined>(undefined)
  const keyId = keys.some((k) => k.id === chosen) ? chosen : keys[0]?.id
  const usage = useKeyUsage(keyId)
  const name = keys.find((k) => k.id === keyId)?.name ?? ''
  if (keys.length === 0) return null
  return (
    <section className="panel usage-panel" aria-labelledby="usage-heading" data-testid="usage-panel">
      <div className="usage-head">
        <h2 id="usage-heading" className="h3">
          Usage, last 7 days
        </h2>
        <label className="field inline">
          <span>Key</span>
          <select value={keyId} onChange={(e) => setChosen(e.target.value)}>
            {keys.map((k) => (
              <option key={k.id} value={k.id}>
                {k.name} ({k.prefix}…)
              </option>
            ))}
          </select>
        </label>
      </div>
      {usage.isPending ? (
        <p className="muted" role="status">
          Loading usage…
        </p>
      ) : usage.isError ? (
        <p className="alert error" role="alert">
          {errorMessage(usage.error)}
        </p>
      ) : (
        <>
          <dl className="usage-totals" data-testid="usage-totals">
            {USAGE_CLASSES.map((c) => (
              <div key={c.name}>
                <dt>
                  <span className="swatch" style={{ background: c.color }} aria-hidden="true" /> {c.label}
                </dt>
                <dd data-testid={`usage-total-${c.name}`}>{usage.data.totals[c.name]}</dd>
              </div>
            ))}
            <div>
              <dt>Last used</dt>
              <dd>{usage.data.last_used_at ? <RelativeTime iso={usage.data.last_used_at} /> : 'never'}</dd>
            </div>
          </dl>
          <div>
            <UsageChart usage={usage.data} label={summary(name, usage.data)} />
            <div className="usage-axis muted small" aria-hidden="true">
              <span>7 days ago</span>
              <span>now</span>
            </div>
          </div>
          <p className="muted small">
            One bar per hour, the current hour on the right; counts reach this chart within about 10 seconds.
          </p>
          <UsageTable usage={usage.data} />
        </>
      )}
    </section>
  )
}
