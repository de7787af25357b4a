import type { FormEvent } from 'react'
import type { EndpointSpec, ParamErrors, ParamValues } from './endpoints'
import { InlineCode } from './inline-code'
import { ParamField } from './param-field'
import { PathText } from './path-text'

/** The chosen endpoint's title, its parameters and the send button with why it may be disabled. */
export function RequestForm({
  endpoint,
  idPrefix,
  headingId,
  values,
  errors,
  onChange,
  onSubmit,
  canSend,
  sending,
  blockedReason,
  examplesFilled,
}: {
  endpoint: EndpointSpec
  idPrefix: string
  headingId: string
  values: ParamValues
  errors: ParamErrors
  onChange: (name: string, value: string) => void
  onSubmit: (event: FormEvent) => void
  canSend: boolean
  sending: boolean
  /** Shown next to the button while it is disabled: no token yet, or Retry-After. */
  blockedReason: { text: string; live: boolean } | null
  examplesFilled: boolean
}) {
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId} className="endpoint-title">
        <span className={`method ${endpoint.method.toLowerCase()}`}>{endpoint.method}</span>{' '}
        <PathText path={endpoint.path} />
      </h2>
      <p className="muted flush-top">
        <InlineCode text={endpoint.summary} />
        {endpoint.scope ? (
          <>
            {' '}
            · scope <code>{endpoint.scope}</code>
          </>
        ) : null}
      </p>
      <form onSubmit={onSubmit} noValidate className="form panel" aria-label="Request parameters">
        {endpoint.params.length === 0 ? (
          <p className="muted flush">This endpoint takes no parameters.</p>
        ) : (
          <div className="param-grid">
            {endpoint.params.map((p) => (
              <ParamField
                key={p.name}
                param={p}
                inputId={`${idPrefix}-p-${p.name}`}
                value={values[p.name] ?? ''}
                error={errors[p.name]}
                onChange={(v) => onChange(p.name, v)}
              />
            ))}
          </div>
        )}
        {examplesFilled ? (
          <p className="help flush" data-testid="live-examples">
            Path parameters are filled with values from the live index; change them to try others.
          </p>
        ) : null}
        <div className="form-actions send-row">
          <button type="submit" className="button" disabled={!canSend}>
            {sending ? 'Sending…' : 'Send request'}
          </button>
          {blockedReason ? (
            <span className="muted small" role={blockedReason.live ? 'status' : undefined}>
              {blockedReason.text}
            </span>
          ) : null}
        </div>
      </form>
    </section>
  )
}
