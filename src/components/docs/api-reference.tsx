'use client'

import { useEffect, useRef, useState } from 'react'
import { useDemoToken } from '@/components/try/use-demo-token'
import { useNow } from '@/components/try/use-now'
import './api-reference.css'
import {
  bearerSchemeName,
  fixSwaggerAccessibility,
  mountSwaggerUI,
  SWAGGER_STYLESHEET,
  type SwaggerUI,
} from './swagger-ui'

/**
 * The OpenAPI document rendered by Swagger UI in the site's theme, with
 * "Try it out" against this service. "Use a demo token" gets the tab's demo
 * token (the one the try-it page uses) and fills in Swagger UI's bearer
 * authorization, so executing an operation returns live data.
 */
export function ApiReference({ specUrl = '/openapi.json' }: { specUrl?: string }) {
  const ref = useRef<HTMLDivElement>(null)
  const [ui, setUi] = useState<SwaggerUI | null>(null)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    const node = ref.current
    if (!node) return
    const unmounted = new AbortController()
    const stopFixing = fixSwaggerAccessibility(node)
    mountSwaggerUI(node, specUrl, unmounted.signal)
      .then((instance) => !unmounted.signal.aborted && setUi(instance))
      .catch(() => !unmounted.signal.aborted && setFailed(true))
    return () => {
      unmounted.abort()
      stopFixing()
    }
  }, [specUrl])

  return (
    <>
      <link rel="stylesheet" href={SWAGGER_STYLESHEET} precedence="default" />
      {ui ? <DemoTokenControl ui={ui} /> : null}
      {!ui && !failed ? (
        <p className="muted" role="status">
          Loading the API reference…
        </p>
      ) : null}
      {failed ? (
        <p className="alert error" role="alert">
          The reference viewer could not load. The raw document is at <a href={specUrl}>{specUrl}</a>.
        </p>
      ) : null}
      <div className="reference-frame" data-testid="api-reference" aria-busy={!ui && !failed}>
        <div ref={ref} />
      </div>
    </>
  )
}

/** One click: get (or reuse) the tab's demo token and authorize Swagger UI with it. */
function DemoTokenControl({ ui }: { ui: SwaggerUI }) {
  const now = useNow(1000)
  const demo = useDemoToken(now)
  const [wanted, setWanted] = useState(false)
  const [applied, setApplied] = useState<string | null>(null)
  const scheme = bearerSchemeName(ui)
  const active = applied !== null && demo.valid && demo.token?.token === applied

  useEffect(() => {
    if (!wanted || !scheme || !demo.valid || !demo.token || applied === demo.token.token) return
    ui.preauthorizeApiKey(scheme, demo.token.token)
    setApplied(demo.token.token)
  }, [wanted, scheme, demo.valid, demo.token, applied, ui])

  function authorizeWithDemoToken() {
    setWanted(true)
    if (!demo.valid || active) void demo.fetchToken()
  }
  return (
    <div className="reference-auth panel">
      <p className="flush">
        <strong>Try it out</strong> calls this service. Authorize with a 15-minute demo token (every read
        scope, demo limits), or with <em>Authorize</em> below; a portal key belongs on your server, not in a
        browser.
      </p>
      <div className="reference-auth-row">
        <button
          type="button"
          className={active ? 'button secondary small' : 'button small'}
          onClick={authorizeWithDemoToken}
          disabled={demo.busy || !scheme}
        >
          {demo.busy ? 'Getting a token…' : active ? 'Use a new demo token' : 'Use a demo token'}
        </button>
        <p className="muted small flush" role="status" data-testid="reference-auth-status">
          {active
            ? `Authorized with demo token ${demo.token?.token.slice(0, 12)}…, valid until ${clockTime(demo.token?.expires_at)}.`
            : applied !== null
              ? 'The demo token expired. Use a new one to keep going.'
              : 'Not authorized yet.'}
        </p>
      </div>
      {demo.error ? (
        <p className="alert error small" role="alert">
          {demo.error}
        </p>
      ) : null}
    </div>
  )
}

/** "14:05" in the reader's locale: a fixed time, so the live region is not re-announced every second. */
function clockTime(iso: string | undefined): string {
  return iso ? new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : ''
}
