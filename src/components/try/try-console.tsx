'use client'

import { type FormEvent, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react'
import { CopyButton } from '@/components/ui/copy-button'
import { buildUrl, type EndpointSpec, type ParamErrors, type ParamValues, validateParams } from './endpoints'
import { JsonView } from './json-view'

interface DemoToken {
  token: string
  expires_at: string
  scopes: string[]
  limits: { requests_per_second: number; requests_per_minute: number; concurrent: number }
}

interface ApiResponse {
  method: string
  url: string
  status: number
  ms: number
  headers: [string, string][]
  body: unknown
  text: string
  page: number
}

const STORAGE_KEY = 'nft-api-demo-token'
/** Response headers worth showing: rate limits, request id, freshness. */
const SHOWN_HEADERS =
  /^(ratelimit.*|retry-after|x-request-id|x-chain-head|x-confirmed-block|content-type|etag|cache-control)$/i

function loadToken(): DemoToken | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY)
    const token = raw ? (JSON.parse(raw) as DemoToken) : null
    return token && new Date(token.expires_at).getTime() > Date.now() ? token : null
  } catch {
    return null
  }
}

function useNow(everyMs: number): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(timer)
  }, [everyMs])
  return now
}

function mmss(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000))
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

function retryAfterSeconds(headers: [string, string][]): number | null {
  const get = (n: string) => headers.find(([k]) => k.toLowerCase() === n)?.[1]
  const value = get('retry-after') ?? get('ratelimit-reset')
  if (!value) return null
  const n = Number(value)
  if (Number.isFinite(n)) return Math.max(0, n)
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000))
}

export function TryConsole({ endpoints, baseUrl }: { endpoints: EndpointSpec[]; baseUrl: string }) {
  const id = useId()
  const now = useNow(1000)
  const [token, setToken] = useState<DemoToken | null>(null)
  const [tokenError, setTokenError] = useState<string | null>(null)
  const [tokenBusy, setTokenBusy] = useState(false)
  const [selectedId, setSelectedId] = useState(
    endpoints.find((e) => e.path === '/v1/collections')?.id ?? endpoints[0]?.id,
  )
  const [values, setValues] = useState<ParamValues>({ limit: '5' })
  const [errors, setErrors] = useState<ParamErrors>({})
  const [sending, setSending] = useState(false)
  const [response, setResponse] = useState<ApiResponse | null>(null)
  const [sendError, setSendError] = useState<string | null>(null)
  const [retryAt, setRetryAt] = useState<number | null>(null)
  const lastAnsweredAt = useRef(0)
  const responseRef = useRef<HTMLElement>(null)

  const endpoint = endpoints.find((e) => e.id === selectedId)
  useEffect(() => setToken(loadToken()), [])

  const expiresIn = token ? new Date(token.expires_at).getTime() - now : 0
  const tokenValid = token !== null && expiresIn > 0
  const waitingForRetry = retryAt !== null && retryAt > now

  async function getToken() {
    setTokenBusy(true)
    setTokenError(null)
    try {
      const res = await fetch('/v1/demo-token', { method: 'POST', cache: 'no-store' })
      const body = (await res.json()) as { data?: DemoToken; error?: { code: string; message: string } }
      if (!res.ok || !body.data) {
        const wait = retryAfterSeconds([...res.headers.entries()])
        throw new Error(
          res.status === 429
            ? `Demo tokens are limited to 5 per minute per address. Try again in ${wait ?? 60} s.`
            : (body.error?.message ?? `The token endpoint answered ${res.status}.`),
        )
      }
      setToken(body.data)
      sessionStorage.setItem(STORAGE_KEY, JSON.stringify(body.data))
    } catch (err) {
      setTokenError(err instanceof Error ? err.message : 'Could not get a demo token.')
    } finally {
      setTokenBusy(false)
    }
  }

  function select(next: EndpointSpec) {
    setSelectedId(next.id)
    setErrors({})
    setResponse(null)
    setSendError(null)
    // Keep values whose parameter the new endpoint also has (address, limit …), never cursors.
    setValues((current) => {
      const kept: ParamValues = {}
      for (const p of next.params) {
        const v = current[p.name]
        if (v && !/^(before_|after_)/.test(p.name)) kept[p.name] = v
      }
      return kept
    })
  }

  const send = useCallback(
    async (target: EndpointSpec, params: ParamValues, page: number) => {
      if (!token) return
      const found = validateParams(target, params)
      setErrors(found)
      if (Object.keys(found).length > 0) {
        const first = target.params.find((p) => found[p.name])
        if (first) document.getElementById(`${id}-p-${first.name}`)?.focus()
        return
      }
      setSending(true)
      setSendError(null)
      // Stay inside the demo limit of requests per second instead of spending a 429. Counted
      // from the previous answer, not the previous send: the server counted that request at
      // some moment before its answer arrived, however long it took to get there.
      const gap = 1000 / Math.max(1, token.limits.requests_per_second) + 50
      const wait = lastAnsweredAt.current + gap - Date.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      const url = buildUrl(target, params)
      const started = performance.now()
      try {
        const res = await fetch(url, {
          method: target.method,
          headers: { Authorization: `Bearer ${token.token}` },
          cache: 'no-store',
        })
        const text = target.method === 'HEAD' ? '' : await res.text()
        let body: unknown = null
        try {
          body = text ? JSON.parse(text) : null
        } catch {
          body = null
        }
        const headers = [...res.headers.entries()]
        setResponse({
          method: target.method,
          url,
          status: res.status,
          ms: Math.round(performance.now() - started),
          headers,
          body,
          text,
          page,
        })
        if (res.status === 429 || res.status === 503) {
          const after = retryAfterSeconds(headers)
          setRetryAt(Date.now() + (after ?? 1) * 1000)
        } else {
          setRetryAt(null)
        }
        requestAnimationFrame(() => responseRef.current?.focus())
      } catch {
        setSendError('The request did not complete: the service may be unreachable. Try again.')
      } finally {
        lastAnsweredAt.current = Date.now()
        setSending(false)
      }
    },
    [token, id],
  )

  const nextPageParams = useMemo(() => {
    const body = response?.body as { pagination?: { next_page_params?: Record<string, unknown> } } | null
    return response && response.status === 200 ? (body?.pagination?.next_page_params ?? null) : null
  }, [response])

  function followNextPage() {
    if (!endpoint || !nextPageParams || !response) return
    // Copy every key and value of next_page_params; keep every other filter as it was.
    const next = { ...values }
    for (const [k, v] of Object.entries(nextPageParams)) next[k] = String(v)
    setValues(next)
    void send(endpoint, next, response.page + 1)
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault()
    if (endpoint) void send(endpoint, values, 1)
  }

  const url = endpoint ? buildUrl(endpoint, values) : ''
  const curl = endpoint
    ? `curl ${endpoint.method === 'HEAD' ? '-I' : '-i'} ${shellQuote(`${baseUrl}${url}`)} \\\n  -H ${shellQuote(
        `Authorization: Bearer ${token?.token ?? '$NFT_API_KEY'}`,
      )}`
    : ''

  return (
    <div className="try">
      <div className="try-side">
        <section className="panel token-box" aria-labelledby={`${id}-token`}>
          <h2 id={`${id}-token`} className="h3" style={{ marginTop: 0 }}>
            Demo token
          </h2>
          {tokenValid ? (
            <>
              <p className="muted small" style={{ margin: 0 }}>
                Expires in
              </p>
              <p
                className={`countdown${expiresIn < 60_000 ? ' low' : ''}`}
                data-testid="token-countdown"
                style={{ margin: '0 0 4px' }}
              >
                <span aria-hidden="true">{mmss(expiresIn)}</span>
                <span className="visually-hidden">
                  {Math.ceil(expiresIn / 60_000)} minute{Math.ceil(expiresIn / 60_000) === 1 ? '' : 's'} left
                </span>
              </p>
              <dl>
                <dt>Token</dt>
                <dd data-testid="demo-token">{token.token.slice(0, 12)}…</dd>
                <dt>Limits</dt>
                <dd>
                  {token.limits.requests_per_second}/s · {token.limits.requests_per_minute}/min ·{' '}
                  {token.limits.concurrent} at a time
                </dd>
                <dt>Scopes</dt>
                <dd>all {token.scopes.length} read scopes</dd>
              </dl>
              <button
                type="button"
                className="button secondary small"
                onClick={getToken}
                disabled={tokenBusy}
              >
                Get a new token
              </button>
            </>
          ) : (
            <>
              <p className="muted small">
                A demo token lets this page call the API for 15 minutes with every read scope. It lives only
                in this tab. For applications, create a key in the <a href="/portal">portal</a>.
              </p>
              {token ? (
                <p className="alert warn small" role="status">
                  Your demo token expired. Get a new one to keep going.
                </p>
              ) : null}
              <button type="button" className="button" onClick={getToken} disabled={tokenBusy}>
                {tokenBusy ? 'Getting a token…' : 'Get a demo token'}
              </button>
            </>
          )}
          {tokenError ? (
            <p className="alert error small" role="alert">
              {tokenError}
            </p>
          ) : null}
        </section>

        <nav className="panel" aria-labelledby={`${id}-endpoints`} style={{ padding: 12 }}>
          <h2 id={`${id}-endpoints`} className="h3" style={{ margin: '4px 8px 8px' }}>
            Endpoints
          </h2>
          <ul className="endpoint-list">
            {endpoints.map((e) => (
              <li key={e.id}>
                <button type="button" aria-pressed={e.id === selectedId} onClick={() => select(e)}>
                  <span className={`method ${e.method.toLowerCase()}`}>{e.method}</span>
                  <span className="path">{e.path}</span>
                </button>
              </li>
            ))}
          </ul>
        </nav>
      </div>

      <div className="try-main">
        {endpoint ? (
          <>
            <section aria-labelledby={`${id}-title`}>
              <h2 id={`${id}-title`} style={{ fontSize: '1.35rem', marginTop: 0 }}>
                <span className={`method ${endpoint.method.toLowerCase()}`}>{endpoint.method}</span>{' '}
                <span className="path">{endpoint.path}</span>
              </h2>
              <p className="muted" style={{ marginTop: 0 }}>
                {endpoint.summary}
                {endpoint.scope ? (
                  <>
                    {' '}
                    · scope <code>{endpoint.scope}</code>
                  </>
                ) : null}
              </p>
              <form onSubmit={onSubmit} noValidate className="form panel" aria-label="Request parameters">
                {endpoint.params.length === 0 ? (
                  <p className="muted" style={{ margin: 0 }}>
                    This endpoint takes no parameters.
                  </p>
                ) : (
                  <div className="param-grid">
                    {endpoint.params.map((p) => {
                      const inputId = `${id}-p-${p.name}`
                      const err = errors[p.name]
                      const describedBy = [
                        p.description ? `${inputId}-help` : '',
                        err ? `${inputId}-err` : '',
                      ]
                        .filter(Boolean)
                        .join(' ')
                      const common = {
                        id: inputId,
                        name: p.name,
                        value: values[p.name] ?? '',
                        'aria-invalid': err ? true : undefined,
                        'aria-describedby': describedBy || undefined,
                        'aria-required': p.required || undefined,
                      }
                      const onChange = (v: string) => setValues((c) => ({ ...c, [p.name]: v }))
                      return (
                        <div className="field" key={p.name}>
                          <label htmlFor={inputId}>
                            {p.name}
                            {p.required ? (
                              <span className="required" aria-hidden="true">
                                *
                              </span>
                            ) : null}
                            <span className="help param-meta">
                              {p.in} · {p.type}
                            </span>
                          </label>
                          {p.enum || p.type === 'boolean' ? (
                            <select {...common} onChange={(e) => onChange(e.target.value)}>
                              <option value="">(not sent)</option>
                              {(p.enum ?? ['true', 'false']).map((o) => (
                                <option key={o} value={o}>
                                  {o}
                                </option>
                              ))}
                            </select>
                          ) : (
                            <input
                              {...common}
                              inputMode={p.type === 'integer' ? 'numeric' : undefined}
                              spellCheck={false}
                              autoComplete="off"
                              placeholder={placeholderFor(p.name)}
                              onChange={(e) => onChange(e.target.value)}
                            />
                          )}
                          {p.description ? (
                            <p id={`${inputId}-help`} className="help">
                              {p.description}
                            </p>
                          ) : null}
                          {err ? (
                            <p id={`${inputId}-err`} className="field-error">
                              {p.name} {err}
                            </p>
                          ) : null}
                        </div>
                      )
                    })}
                  </div>
                )}
                <div className="form-actions" style={{ justifyContent: 'flex-start', alignItems: 'center' }}>
                  <button
                    type="submit"
                    className="button"
                    disabled={!tokenValid || sending || waitingForRetry}
                  >
                    {sending ? 'Sending…' : 'Send request'}
                  </button>
                  {!tokenValid ? <span className="muted small">Get a demo token first.</span> : null}
                  {waitingForRetry ? (
                    <span className="muted small" role="status">
                      You can send again in {mmss((retryAt ?? now) - now)}.
                    </span>
                  ) : null}
                </div>
              </form>
            </section>

            <section aria-labelledby={`${id}-curl`}>
              <h2 id={`${id}-curl`} className="h3">
                The same request with curl
              </h2>
              <div className="curl-row">
                <pre data-testid="curl">
                  <code>{curl}</code>
                </pre>
                <CopyButton value={curl} label="Copy" />
              </div>
            </section>

            {sendError ? (
              <p className="alert error" role="alert">
                {sendError}
              </p>
            ) : null}

            {response ? (
              <section
                ref={responseRef}
                tabIndex={-1}
                aria-labelledby={`${id}-response`}
                data-testid="response"
                className="response"
              >
                <h2 id={`${id}-response`} className="response-head">
                  Response
                  <span
                    className={`status-code s${String(response.status)[0]}`}
                    data-testid="response-status"
                  >
                    {response.status}
                  </span>
                  <span className="muted small">
                    {response.ms} ms · page {response.page} ·{' '}
                    <code className="small">
                      {response.method} {response.url}
                    </code>
                  </span>
                </h2>
                <StatusExplanation response={response} retryIn={retryAt ? retryAt - now : 0} />
                {nextPageParams ? (
                  <p>
                    <button
                      type="button"
                      className="button"
                      onClick={followNextPage}
                      disabled={sending || waitingForRetry}
                    >
                      Next page →
                    </button>{' '}
                    <span className="muted small">
                      sends <code>{JSON.stringify(nextPageParams)}</code> from <code>next_page_params</code>
                    </span>
                  </p>
                ) : response.status === 200 &&
                  (response.body as { pagination?: { has_more?: boolean } } | null)?.pagination?.has_more ===
                    false ? (
                  <p className="muted small" data-testid="last-page">
                    Last page: <code>has_more</code> is false.
                  </p>
                ) : null}
                <details open>
                  <summary>Headers</summary>
                  <table className="headers-table">
                    <tbody>
                      {response.headers
                        .filter(([k]) => SHOWN_HEADERS.test(k))
                        .map(([k, v]) => (
                          <tr key={k}>
                            <th scope="row">{k}</th>
                            <td>{v}</td>
                          </tr>
                        ))}
                    </tbody>
                  </table>
                </details>
                {response.method === 'HEAD' ? (
                  <p className="muted">HEAD answers with headers only.</p>
                ) : response.body !== null ? (
                  <JsonView value={response.body} />
                ) : (
                  <pre>{response.text || '(empty body)'}</pre>
                )}
              </section>
            ) : null}
          </>
        ) : (
          <p className="muted">The API document lists no endpoints.</p>
        )}
      </div>
    </div>
  )
}

function placeholderFor(name: string): string | undefined {
  if (name === 'address' || name === 'collection' || name === 'after_collection') return '0x… (lowercase)'
  if (name === 'tokenId' || name === 'after_token_id') return 'e.g. 1'
  if (name === 'limit') return '20'
  if (name === 'search') return 'name or symbol'
  return undefined
}

function StatusExplanation({ response, retryIn }: { response: ApiResponse; retryIn: number }) {
  const code = (response.body as { error?: { code?: string; message?: string } } | null)?.error
  if (response.status === 429) {
    return (
      <div className="alert warn" role="alert">
        <strong>429 Rate limited.</strong> Demo tokens allow 1 request per second, 30 per minute and 2 at a
        time (per token and per address). The request was not counted. Wait for <code>Retry-After</code>{' '}
        seconds — {retryIn > 0 ? `${Math.ceil(retryIn / 1000)} s from now` : 'you can send again now'} — then
        retry. In code, retry 429 and 503 with exponential backoff plus jitter; never retry 400, 401, 403 or
        404 unchanged.
      </div>
    )
  }
  if (response.status === 401) {
    return (
      <div className="alert error" role="alert">
        <strong>401 Unauthorized.</strong> {code?.message ?? ''} The demo token may have expired: get a new
        one.
      </div>
    )
  }
  if (response.status === 400) {
    return (
      <div className="alert error" role="alert">
        <strong>400 Invalid argument.</strong> {code?.message ?? ''}
      </div>
    )
  }
  if (response.status === 404) {
    return (
      <div className="alert info" role="status">
        <strong>404 Not found.</strong> {code?.message ?? 'No such resource.'}
      </div>
    )
  }
  if (response.status >= 500) {
    return (
      <div className="alert error" role="alert">
        <strong>{response.status}.</strong> {code?.message ?? ''} Retry with backoff; quote the request id if
        it persists.
      </div>
    )
  }
  return null
}
