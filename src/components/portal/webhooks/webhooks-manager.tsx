'use client'
/**
 * /portal/webhooks (docs/portal.md, "Webhooks"): the signed-in user's webhook
 * endpoints per API key — create (the signing secret shown once), enable,
 * disable, rotate the secret, delete — and each endpoint's delivery log with
 * one-click redelivery. Delivery itself: docs/push.md, "Webhooks".
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { errorMessage, useTRPC } from '@/components/portal/trpc'
import { SecretField } from '@/components/ui/secret-field'
import { STANDARDS, type StandardParam } from '@/lib/schemas'

function when(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : '—'
}

function SecretOnce({ secret, url, onDone }: { secret: string; url: string; onDone: () => void }) {
  const id = useId()
  return (
    <div className="panel form" data-testid="webhook-secret-panel">
      <p className="alert warn" role="alert">
        <strong>Copy this signing secret now. It will not be shown again.</strong> Receivers verify each
        request with it (Standard Webhooks; <code>verifyWebhook</code> of the typed client). If you lose it,
        rotate it.
      </p>
      <SecretField id={id} label={<>Signing secret of {url}</>} secret={secret} testId="webhook-secret" />
      <div className="form-actions">
        <button type="button" className="button" onClick={onDone}>
          I have stored the secret
        </button>
      </div>
    </div>
  )
}

/** How the form and the list name a webhook's token standard (none: ERC-721 as the specification shows it). */
const STANDARD_LABELS: Record<StandardParam, string> = {
  ERC721: 'ERC-721, with amount',
  ERC1155: 'ERC-1155',
  all: 'ERC-721 and ERC-1155',
}

function CreateEndpointForm({ onCreated }: { onCreated: (secret: string, url: string) => void }) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const keys = useQuery(trpc.keys.list.queryOptions())
  const active = (keys.data ?? []).filter((k) => k.status === 'active')
  const [keyId, setKeyId] = useState('')
  const [url, setUrl] = useState('')
  const [eventType, setEventType] = useState('')
  const [standard, setStandard] = useState('')
  const [collection, setCollection] = useState('')
  const [confirmations, setConfirmations] = useState('0')
  const create = useMutation(
    trpc.webhooks.create.mutationOptions({
      onSuccess: (result) => {
        void queryClient.invalidateQueries(trpc.webhooks.pathFilter())
        setUrl('')
        onCreated(result.secret, result.endpoint.url)
      },
    }),
  )
  const ids = useId()
  const submit = (e: FormEvent) => {
    e.preventDefault()
    create.mutate({
      key_id: keyId || active[0]?.id || '',
      url: url.trim(),
      ...(eventType ? { event_type: eventType as 'mint' | 'transfer' | 'burn' } : {}),
      ...(standard ? { standard: standard as StandardParam } : {}),
      ...(collection.trim() ? { collection: collection.trim() } : {}),
      min_confirmations: Number(confirmations) || 0,
    })
  }
  if (keys.isSuccess && active.length === 0)
    return <p className="muted">Create an API key first: webhook endpoints belong to a key.</p>
  return (
    <form className="form panel" onSubmit={submit} noValidate aria-label="New webhook endpoint">
      <h2>New endpoint</h2>
      <div className="field">
        <label htmlFor={`${ids}-key`}>API key</label>
        <select
          id={`${ids}-key`}
          value={keyId || active[0]?.id || ''}
          onChange={(e) => setKeyId(e.target.value)}
        >
          {active.map((k) => (
            <option key={k.id} value={k.id}>
              {k.name} ({k.prefix})
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${ids}-url`}>URL</label>
        <input
          id={`${ids}-url`}
          type="url"
          required
          placeholder="https://example.com/webhooks/nft"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
        <p className="help">https only; private and loopback addresses are refused.</p>
      </div>
      <div className="field">
        <label htmlFor={`${ids}-type`}>Event type</label>
        <select id={`${ids}-type`} value={eventType} onChange={(e) => setEventType(e.target.value)}>
          <option value="">all</option>
          <option value="mint">mint</option>
          <option value="transfer">transfer</option>
          <option value="burn">burn</option>
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${ids}-standard`}>Token standard</label>
        <select id={`${ids}-standard`} value={standard} onChange={(e) => setStandard(e.target.value)}>
          <option value="">ERC-721</option>
          {STANDARDS.map((s) => (
            <option key={s} value={s}>
              {STANDARD_LABELS[s]}
            </option>
          ))}
        </select>
        <p className="help">
          ERC-721 alone sends the events as the API specification shows them; naming a standard adds each
          event's <code>amount</code>.
        </p>
      </div>
      <div className="field">
        <label htmlFor={`${ids}-collection`}>Collection (optional)</label>
        <input
          id={`${ids}-collection`}
          placeholder="0x…"
          value={collection}
          onChange={(e) => setCollection(e.target.value)}
          spellCheck={false}
        />
      </div>
      <div className="field">
        <label htmlFor={`${ids}-conf`}>Confirmations before sending (0–64)</label>
        <input
          id={`${ids}-conf`}
          type="number"
          min={0}
          max={64}
          value={confirmations}
          onChange={(e) => setConfirmations(e.target.value)}
        />
      </div>
      {create.error ? (
        <p className="alert error" role="alert" data-testid="webhook-error">
          {errorMessage(create.error)}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="button" disabled={create.isPending}>
          Create endpoint
        </button>
      </div>
    </form>
  )
}

function DeliveryLog({ endpointId }: { endpointId: string }) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const log = useQuery({
    ...trpc.webhooks.deliveries.queryOptions({ id: endpointId }),
    refetchInterval: 2_000,
  })
  const redeliver = useMutation(
    trpc.webhooks.redeliver.mutationOptions({
      onSuccess: () => void queryClient.invalidateQueries(trpc.webhooks.deliveries.pathFilter()),
    }),
  )
  if (log.error) return <p className="alert error">{errorMessage(log.error)}</p>
  const rows = log.data ?? []
  return (
    <section className="panel" aria-label="Delivery log" data-testid="delivery-log">
      <h3>Recent deliveries</h3>
      {redeliver.error ? <p className="alert error">{errorMessage(redeliver.error)}</p> : null}
      {rows.length === 0 ? (
        <p className="muted">No deliveries yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="data-table responsive">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Type</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Duration</th>
                <th scope="col">Next retry</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={d.id} data-testid="delivery-row">
                  <td data-label="Event">
                    <code>{d.event_id}</code>
                  </td>
                  <td data-label="Type">{d.event_type}</td>
                  <td data-label="Status" data-testid="delivery-status">
                    {d.status}
                  </td>
                  <td data-label="Attempts">{d.attempts}</td>
                  <td data-label="Last answer" title={d.last_error ?? undefined}>
                    {d.last_status_code ?? (d.last_error ? 'no answer' : '—')}
                  </td>
                  <td data-label="Duration">
                    {d.last_duration_ms === null ? '—' : `${d.last_duration_ms} ms`}
                  </td>
                  <td data-label="Next retry">{when(d.next_attempt_at)}</td>
                  <td data-label="Actions" className="actions">
                    <button
                      type="button"
                      className="button secondary small"
                      disabled={redeliver.isPending}
                      onClick={() => redeliver.mutate({ id: endpointId, delivery_id: d.id })}
                    >
                      Redeliver
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

export function WebhooksManager() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const list = useQuery(trpc.webhooks.list.queryOptions({}))
  const [secret, setSecret] = useState<{ secret: string; url: string } | null>(null)
  const [open, setOpen] = useState<string | null>(null)
  const refresh = () => void queryClient.invalidateQueries(trpc.webhooks.pathFilter())
  const setEnabled = useMutation(trpc.webhooks.setEnabled.mutationOptions({ onSuccess: refresh }))
  const remove = useMutation(trpc.webhooks.delete.mutationOptions({ onSuccess: refresh }))
  const rotate = useMutation(
    trpc.webhooks.rotateSecret.mutationOptions({
      onSuccess: (result) => {
        refresh()
        setSecret({ secret: result.secret, url: result.endpoint.url })
      },
    }),
  )
  const failure = setEnabled.error ?? remove.error ?? rotate.error
  return (
    <div className="stack">
      <h1>Webhooks</h1>
      <p className="muted">
        Signed POSTs of new and reorged activity to your endpoints, per API key (at most 10 per key).
      </p>
      {secret ? (
        <SecretOnce secret={secret.secret} url={secret.url} onDone={() => setSecret(null)} />
      ) : (
        <CreateEndpointForm onCreated={(s, url) => setSecret({ secret: s, url })} />
      )}
      {failure ? <p className="alert error">{errorMessage(failure)}</p> : null}
      <section className="panel" aria-label="Endpoints">
        <h2>Endpoints</h2>
        {list.error ? <p className="alert error">{errorMessage(list.error)}</p> : null}
        {list.data && list.data.length === 0 ? <p className="muted">No endpoints yet.</p> : null}
        {list.data && list.data.length > 0 ? (
          <div className="table-wrap">
            <table className="data-table responsive">
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Filters</th>
                  <th scope="col">Secret</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((e) => (
                  <tr key={e.id} data-testid="webhook-row">
                    <th scope="row" data-label="URL">
                      <code>{e.url}</code>
                    </th>
                    <td data-label="Filters">
                      {e.event_type ?? 'all events'}
                      {e.standard === null ? '' : ` (${STANDARD_LABELS[e.standard]})`}
                      {e.collection ? ` of ${e.collection}` : ''}
                      {e.min_confirmations > 0 ? `, ${e.min_confirmations} confirmations` : ''}
                    </td>
                    <td data-label="Secret">
                      <code>{e.secret_prefix}…</code>
                    </td>
                    <td data-label="Status" data-testid="webhook-status">
                      {e.enabled ? 'enabled' : `disabled: ${e.disabled_reason ?? ''}`}
                    </td>
                    <td data-label="Actions" className="actions">
                      <div className="row-actions">
                        <button
                          type="button"
                          className="button secondary small"
                          onClick={() => setOpen(open === e.id ? null : e.id)}
                          aria-expanded={open === e.id}
                        >
                          Deliveries
                        </button>
                        <button
                          type="button"
                          className="button secondary small"
                          onClick={() => setEnabled.mutate({ id: e.id, enabled: !e.enabled })}
                        >
                          {e.enabled ? 'Disable' : 'Enable'}
                        </button>
                        <button
                          type="button"
                          className="button secondary small"
                          onClick={() => rotate.mutate({ id: e.id })}
                        >
                          Rotate secret
                        </button>
                        <button
                          type="button"
                          className="button danger-outline small"
                          onClick={() => {
                            if (window.confirm(`Delete the endpoint ${e.url} and its delivery log?`))
                              remove.mutate({ id: e.id })
                          }}
                        >
                          Delete
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      {open ? <DeliveryLog endpointId={open} /> : null}
    </div>
  )
}
