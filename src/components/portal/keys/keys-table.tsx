import type { ApiKeyView } from '@/components/portal/trpc'
import { RelativeTime } from '@/components/ui/time'
import { SCOPES } from '@/lib/scopes'
import { KeyStatus } from './key-status'

function ScopeChips({ scopes }: { scopes: ApiKeyView['scopes'] }) {
  return (
    <ul className="chips" aria-label="Scopes">
      {scopes.length === SCOPES.length ? (
        <li className="chip">all read scopes</li>
      ) : (
        scopes.map((s) => (
          <li key={s} className="chip">
            {s}
          </li>
        ))
      )}
    </ul>
  )
}

function AllowedOrigins({ origins }: { origins: string[] }) {
  if (origins.length === 0) return <span className="muted">none (server-side)</span>
  return (
    <ul className="plain">
      {origins.map((o) => (
        <li key={o}>
          <code>{o}</code>
        </li>
      ))}
    </ul>
  )
}

interface KeyActionHandlers {
  onEdit: (key: ApiKeyView) => void
  onRotate: (key: ApiKeyView) => void
  onRevoke: (key: ApiKeyView) => void
}

function KeyActions({ apiKey, onEdit, onRotate, onRevoke }: KeyActionHandlers & { apiKey: ApiKeyView }) {
  return (
    <td data-label="Actions" className="actions">
      <div className="row-actions">
        <button
          type="button"
          className="button secondary small"
          onClick={() => onEdit(apiKey)}
          aria-label={`Edit ${apiKey.name}`}
        >
          Edit
        </button>
        <button
          type="button"
          className="button secondary small"
          onClick={() => onRotate(apiKey)}
          aria-label={`Rotate ${apiKey.name}`}
        >
          Rotate
        </button>
        <button
          type="button"
          className="button danger-outline small"
          onClick={() => onRevoke(apiKey)}
          aria-label={`Revoke ${apiKey.name}`}
        >
          Revoke
        </button>
      </div>
    </td>
  )
}

/** A captioned table of keys; with actions it offers edit, rotate and revoke on each row. */
export function KeysTable({
  caption,
  keys,
  actions,
}: {
  caption: string
  keys: ApiKeyView[]
  actions?: KeyActionHandlers
}) {
  if (keys.length === 0) return null
  return (
    <div className="table-wrap">
      <table className="data-table responsive">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Scopes</th>
            <th scope="col">Allowed origins</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            {actions ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id} data-testid="key-row" data-key-name={key.name}>
              <th scope="row" data-label="Name">
                {key.name}
              </th>
              <td data-label="Key">
                <code className="nowrap" data-testid="key-prefix">
                  {key.prefix}…
                </code>
              </td>
              <td data-label="Scopes">
                <ScopeChips scopes={key.scopes} />
              </td>
              <td data-label="Allowed origins">
                <AllowedOrigins origins={key.allowed_origins} />
              </td>
              <td data-label="Created">
                <RelativeTime iso={key.created_at} />
              </td>
              <td data-label="Last used">
                {key.last_used_at ? (
                  <RelativeTime iso={key.last_used_at} />
                ) : (
                  <span className="muted">never</span>
                )}
              </td>
              <td data-label="Status">
                <KeyStatus apiKey={key} />
              </td>
              {actions ? <KeyActions apiKey={key} {...actions} /> : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
