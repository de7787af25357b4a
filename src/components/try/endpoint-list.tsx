import type { EndpointSpec } from './endpoints'
import { PathText } from './path-text'

export function EndpointList({
  endpoints,
  selectedId,
  onSelect,
  headingId,
}: {
  endpoints: EndpointSpec[]
  selectedId: string | undefined
  onSelect: (endpoint: EndpointSpec) => void
  headingId: string
}) {
  return (
    <nav className="panel endpoint-nav" aria-labelledby={headingId}>
      <h2 id={headingId} className="h3">
        Endpoints
      </h2>
      <ul className="endpoint-list">
        {endpoints.map((e) => (
          <li key={e.id}>
            <button type="button" aria-pressed={e.id === selectedId} onClick={() => onSelect(e)}>
              <span className={`method ${e.method.toLowerCase()}`}>{e.method}</span>
              <PathText path={e.path} />
            </button>
          </li>
        ))}
      </ul>
    </nav>
  )
}
