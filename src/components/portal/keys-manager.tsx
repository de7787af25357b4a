'use client'

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { Dialog } from '@/components/ui/dialog'
import { RelativeTime } from '@/components/ui/time'
import { SCOPES, type Scope } from '@/lib/scopes'
import { type ApiKeyView, errorMessage, type KeyWithSecret, portalApi } from './api'
import { SecretReveal } from './secret-reveal'

export const SCOPE_GRANTS: Record<Scope, string> = {
  'read:collections': 'Collection list, HEAD and detail',
  'read:nfts': 'Single NFT and collection NFTs',
  'read:owners': 'NFTs held by an address',
  'read:transfers': 'Both transfer lists',
  'read:activity': 'Activity feed',
  'read:status': 'Indexer status',
}

const GRACE_CHOICES = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 24 * 3600, label: '24 hours' },
  { seconds: 3 * 24 * 3600, label: '3 days' },
  { seconds: 7 * 24 * 3600, label: '7 days' },
]

const KEYS = ['portal', 'keys'] as const

type Pending =
  | { kind: 'create' }
  | { kind: 'rotate'; key: ApiKeyView }
  | { kind: 'revoke'; key: ApiKeyView }
  | { kind: 'secret'; title: string; result: KeyWithSecret; note?: string }
  | null

export function KeysManager({ initialKeys }: { initialKeys?: ApiKeyView[] }) {
  const queryClient = useQueryClient()
  const keys = useQuery({
    queryKey: KEYS,
    queryFn: portalApi.listKeys,
    ...(initialKeys ? { initialData: initialKeys } : {}),
  })
  const [pending, setPending] = useState<Pending>(null)
  const [announcement, setAnnouncement] = useState('')
  const refresh = () => queryClient.invalidateQueries({ queryKey: KEYS })

  const active = keys.data?.filter((k) => k.status === 'active') ?? []
  const revoked = keys.data?.filter((k) => k.status === 'revoked') ?? []

  return (
    <>
      <div className="page-head">
        <div>
          <h1>API keys</h1>
          <p className="muted">
            Keys are server-side secrets: keep them out of browsers, repositories and URLs. Each key is
            limited to 5 requests per second, 300 per minute and 10 at a time.
          </p>
        </div>
        <button type="button" className="button" onClick={() => setPending({ kind: 'create' })}>
          Create key
        </button>
      </div>

      <p className="visually-hidden" role="status" aria-live="polite">
        {announcement}
      </p>

      {keys.isPending ? (
        <p className="muted" role="status">
          Loading your keys…
        </p>
      ) : keys.isError ? (
        <p className="alert error" role="alert">
          {errorMessage(keys.error)}{' '}
          <button type="button" className="link-button" onClick={() => keys.refetch()}>
            Retry
          </button>
        </p>
      ) : keys.data.length === 0 ? (
        <div className="empty panel">
          <h2 className="h3">No keys yet</h2>
          <p className="muted">
            Create a key, then send it as `Authorization: Bearer &lt;key&gt;` from your server.
          </p>
          <button type="button" className="button" onClick={() => setPending({ kind: 'create' })}>
            Create your first key
          </button>
        </div>
      ) : (
        <>
          <KeysTable
            caption="Active keys"
            keys={active}
            onRotate={(key) => setPending({ kind: 'rotate', key })}
            onRevoke={(key) => setPending({ kind: 'revoke', key })}
          />
          {revoked.length > 0 ? <KeysTable caption="Revoked keys" keys={revoked} /> : null}
        </>
      )}

      <Dialog open={pending?.kind === 'create'} title="Create an API key" onClose={() => setPending(null)}>
        <CreateKeyForm
          onCancel={() => setPending(null)}
          onCreated={(result) => {
            void refresh()
            setAnnouncement(`Key ${result.key.name} created.`)
            setPending({ kind: 'secret', title: 'Your new API key', result })
          }}
        />
      </Dialog>

      <Dialog
        open={pending?.kind === 'rotate'}
        title={pending?.kind === 'rotate' ? `Rotate “${pending.key.name}”` : 'Rotate key'}
        onClose={() => setPending(null)}
      >
        {pending?.kind === 'rotate' ? (
          <RotateKeyForm
            apiKey={pending.key}
            onCancel={() => setPending(null)}
            onRotated={(result, note) => {
              void refresh()
              setAnnouncement(`Key ${result.key.name} rotated.`)
              setPending({ kind: 'secret', title: 'The new secret', result, note })
            }}
          />
        ) : null}
      </Dialog>

      <Dialog
        open={pending?.kind === 'revoke'}
        title={pending?.kind === 'revoke' ? `Revoke “${pending.key.name}”?` : 'Revoke key'}
        onClose={() => setPending(null)}
      >
        {pending?.kind === 'revoke' ? (
          <RevokeKeyForm
            apiKey={pending.key}
            onCancel={() => setPending(null)}
            onRevoked={() => {
              void refresh()
              setAnnouncement(`Key ${pending.key.name} revoked.`)
              setPending(null)
            }}
          />
        ) : null}
      </Dialog>

      <Dialog
        open={pending?.kind === 'secret'}
        title={pending?.kind === 'secret' ? pending.title : 'Secret'}
        dismissible={false}
        onClose={() => setPending(null)}
        wide
      >
        {pending?.kind === 'secret' ? (
          <SecretReveal
            secret={pending.result.secret}
            keyName={pending.result.key.name}
            note={pending.note}
            onDone={() => setPending(null)}
          />
        ) : null}
      </Dialog>
    </>
  )
}

function KeyStatus({ apiKey }: { apiKey: ApiKeyView }) {
  if (apiKey.status === 'revoked') return <span className="badge bad">Revoked</span>
  const ending = apiKey.active_secrets.filter((s) => s.expires_at !== null)
  return (
    <>
      <span className="badge complete">Active</span>
      {ending.map((s) => (
        <span key={s.prefix} className="small muted block">
          old secret <code>{s.prefix}…</code> works until <RelativeTime iso={s.expires_at!} />
        </span>
      ))}
    </>
  )
}

function KeysTable({
  caption,
  keys,
  onRotate,
  onRevoke,
}: {
  caption: string
  keys: ApiKeyView[]
  onRotate?: (key: ApiKeyView) => void
  onRevoke?: (key: ApiKeyView) => void
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
            {onRotate ? (
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
                <code data-testid="key-prefix">{key.prefix}…</code>
              </td>
              <td data-label="Scopes">
                <ul className="chips" aria-label="Scopes">
                  {key.scopes.length === SCOPES.length ? (
                    <li className="chip">all read scopes</li>
                  ) : (
                    key.scopes.map((s) => (
                      <li key={s} className="chip">
                        {s}
                      </li>
                    ))
                  )}
                </ul>
              </td>
              <td data-label="Allowed origins">
                {key.allowed_origins.length === 0 ? (
                  <span className="muted">none (server-side)</span>
                ) : (
                  <ul className="plain">
                    {key.allowed_origins.map((o) => (
                      <li key={o}>
                        <code>{o}</code>
                      </li>
                    ))}
                  </ul>
                )}
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
              {onRotate && onRevoke ? (
                <td data-label="Actions" className="actions">
                  <button
                    type="button"
                    className="button secondary small"
                    onClick={() => onRotate(key)}
                    aria-label={`Rotate ${key.name}`}
                  >
                    Rotate
                  </button>
                  <button
                    type="button"
                    className="button danger-outline small"
                    onClick={() => onRevoke(key)}
                    aria-label={`Revoke ${key.name}`}
                  >
                    Revoke
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** Parses the origins textarea: one origin per line (or comma separated); errors name the bad line. */
export function parseOrigins(text: string): { origins: string[]; error?: string } {
  const origins: string[] = []
  for (const raw of text.split(/[\n,]/)) {
    const value = raw.trim()
    if (!value) continue
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return { origins, error: `“${value}” is not an origin like https://app.example.com` }
    }
    const pathless = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/?$/i.test(value)
    if (!/^https?:$/.test(url.protocol) || !pathless || url.username || url.password) {
      return {
        origins,
        error: `“${value}” is not an origin: scheme and host only, like https://app.example.com`,
      }
    }
    if (!origins.includes(url.origin)) origins.push(url.origin)
  }
  return { origins }
}

function CreateKeyForm({
  onCancel,
  onCreated,
}: {
  onCancel: () => void
  onCreated: (r: KeyWithSecret) => void
}) {
  const id = useId()
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<Scope[]>([...SCOPES])
  const [origins, setOrigins] = useState('')
  const [errors, setErrors] = useState<{ name?: string; scopes?: string; origins?: string }>({})
  const create = useMutation({ mutationFn: portalApi.createKey, onSuccess: onCreated })

  function submit(event: FormEvent) {
    event.preventDefault()
    const parsed = parseOrigins(origins)
    const next = {
      ...(name.trim() === '' ? { name: 'Give the key a name, e.g. “production backend”.' } : {}),
      ...(name.trim().length > 64 ? { name: 'At most 64 characters.' } : {}),
      ...(scopes.length === 0 ? { scopes: 'Choose at least one scope.' } : {}),
      ...(parsed.error ? { origins: parsed.error } : {}),
    }
    setErrors(next)
    if (Object.keys(next).length > 0) {
      const first = next.name ? `${id}-name` : next.scopes ? `${id}-scope-0` : `${id}-origins`
      document.getElementById(first)?.focus()
      return
    }
    create.mutate({ name: name.trim(), scopes, allowedOrigins: parsed.origins })
  }

  return (
    <form onSubmit={submit} noValidate className="form">
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input
          id={`${id}-name`}
          name="name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          maxLength={64}
          autoComplete="off"
          aria-invalid={errors.name ? true : undefined}
          aria-describedby={`${id}-name-help${errors.name ? ` ${id}-name-error` : ''}`}
          data-autofocus
        />
        <p id={`${id}-name-help`} className="help">
          Only you see it: name keys after where they run.
        </p>
        {errors.name ? (
          <p id={`${id}-name-error`} className="field-error">
            {errors.name}
          </p>
        ) : null}
      </div>
      <fieldset className="field" aria-describedby={errors.scopes ? `${id}-scopes-error` : undefined}>
        <legend>Scopes</legend>
        <div className="scope-grid">
          {SCOPES.map((scope, i) => (
            <label key={scope} className="check">
              <input
                id={`${id}-scope-${i}`}
                type="checkbox"
                name="scopes"
                value={scope}
                checked={scopes.includes(scope)}
                onChange={(e) =>
                  setScopes((current) =>
                    e.target.checked
                      ? SCOPES.filter((s) => s === scope || current.includes(s))
                      : current.filter((s) => s !== scope),
                  )
                }
              />
              <span>
                <code>{scope}</code>
                <span className="help">{SCOPE_GRANTS[scope]}</span>
              </span>
            </label>
          ))}
        </div>
        {errors.scopes ? (
          <p id={`${id}-scopes-error`} className="field-error">
            {errors.scopes}
          </p>
        ) : null}
      </fieldset>
      <div className="field">
        <label htmlFor={`${id}-origins`}>Allowed origins (optional)</label>
        <textarea
          id={`${id}-origins`}
          name="origins"
          rows={3}
          value={origins}
          onChange={(e) => setOrigins(e.target.value)}
          placeholder="https://app.example.com"
          aria-invalid={errors.origins ? true : undefined}
          aria-describedby={`${id}-origins-help${errors.origins ? ` ${id}-origins-error` : ''}`}
        />
        <p id={`${id}-origins-help`} className="help">
          One per line. Leave empty for a server-side key: any request that carries an <code>Origin</code>{' '}
          header not listed here is refused with 403.
        </p>
        {errors.origins ? (
          <p id={`${id}-origins-error`} className="field-error">
            {errors.origins}
          </p>
        ) : null}
      </div>
      <FormActions mutation={create} onCancel={onCancel} label="Create key" busyLabel="Creating…" />
    </form>
  )
}

function RotateKeyForm({
  apiKey,
  onCancel,
  onRotated,
}: {
  apiKey: ApiKeyView
  onCancel: () => void
  onRotated: (r: KeyWithSecret, note: string) => void
}) {
  const id = useId()
  const [when, setWhen] = useState<'now' | 'grace'>('now')
  const [grace, setGrace] = useState(GRACE_CHOICES[1]!.seconds)
  const rotate = useMutation({
    mutationFn: () => portalApi.rotateKey(apiKey.id, when === 'now' ? 0 : grace),
    onSuccess: (result) => {
      const label = GRACE_CHOICES.find((c) => c.seconds === grace)?.label ?? `${grace} s`
      onRotated(
        result,
        when === 'now'
          ? `The old secret (${apiKey.prefix}…) stopped working just now.`
          : `The old secret (${apiKey.prefix}…) keeps working for ${label}; deploy the new one before then.`,
      )
    },
  })
  return (
    <form
      className="form"
      onSubmit={(e) => {
        e.preventDefault()
        rotate.mutate()
      }}
    >
      <p>
        Rotation issues a new secret for <strong>{apiKey.name}</strong> with the same scopes and origins.
        Choose when the current secret <code>{apiKey.prefix}…</code> stops working.
      </p>
      <fieldset className="field">
        <legend>Old secret stops working</legend>
        <label className="radio">
          <input
            type="radio"
            name="when"
            value="now"
            checked={when === 'now'}
            onChange={() => setWhen('now')}
            data-autofocus
          />
          <span>
            Now <span className="help">Use this when the secret may have leaked.</span>
          </span>
        </label>
        <label className="radio">
          <input
            type="radio"
            name="when"
            value="grace"
            checked={when === 'grace'}
            onChange={() => setWhen('grace')}
          />
          <span>
            After a grace period{' '}
            <span className="help">
              Both secrets work meanwhile, so you can deploy the new one without downtime.
            </span>
          </span>
        </label>
        <div className="field inset">
          <label htmlFor={`${id}-grace`}>Grace period</label>
          <select
            id={`${id}-grace`}
            value={grace}
            disabled={when !== 'grace'}
            onChange={(e) => setGrace(Number(e.target.value))}
          >
            {GRACE_CHOICES.map((c) => (
              <option key={c.seconds} value={c.seconds}>
                {c.label}
              </option>
            ))}
          </select>
        </div>
      </fieldset>
      <FormActions mutation={rotate} onCancel={onCancel} label="Rotate key" busyLabel="Rotating…" />
    </form>
  )
}

function RevokeKeyForm({
  apiKey,
  onCancel,
  onRevoked,
}: {
  apiKey: ApiKeyView
  onCancel: () => void
  onRevoked: () => void
}) {
  const revoke = useMutation({ mutationFn: () => portalApi.revokeKey(apiKey.id), onSuccess: onRevoked })
  return (
    <div className="form">
      <p>
        Every request with <strong>{apiKey.name}</strong> (<code>{apiKey.prefix}…</code>) will be refused with
        401 within a second, on every server. This cannot be undone.
      </p>
      <FormActions
        mutation={revoke}
        onCancel={onCancel}
        cancelLabel="Keep the key"
        label="Revoke key"
        busyLabel="Revoking…"
        onConfirm={() => revoke.mutate()}
      />
    </div>
  )
}

/**
 * The footer of a key dialog: the mutation's error, if any, then cancel and
 * confirm. Without `onConfirm` the confirm button submits the surrounding form;
 * with it (a destructive action) it is a danger button and cancel takes focus.
 */
function FormActions({
  mutation,
  onCancel,
  cancelLabel = 'Cancel',
  label,
  busyLabel,
  onConfirm,
}: {
  mutation: { isError: boolean; error: unknown; isPending: boolean }
  onCancel: () => void
  cancelLabel?: string
  label: string
  busyLabel: string
  onConfirm?: () => void
}) {
  return (
    <>
      {mutation.isError ? (
        <p className="alert error" role="alert">
          {errorMessage(mutation.error)}
        </p>
      ) : null}
      <div className="form-actions">
        <button
          type="button"
          className="button secondary"
          onClick={onCancel}
          data-autofocus={onConfirm ? true : undefined}
        >
          {cancelLabel}
        </button>
        <button
          type={onConfirm ? 'button' : 'submit'}
          className={onConfirm ? 'button danger' : 'button'}
          disabled={mutation.isPending}
          onClick={onConfirm}
        >
          {mutation.isPending ? busyLabel : label}
        </button>
      </div>
    </>
  )
}
