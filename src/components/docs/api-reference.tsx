'use client'

import { useEffect, useRef, useState } from 'react'

type SwaggerUIBundleFn = (options: Record<string, unknown>) => unknown

declare global {
  interface Window {
    SwaggerUIBundle?: SwaggerUIBundleFn
  }
}

const SCRIPT = '/docs/assets/swagger-ui-bundle.js'
const STYLE = '/docs/assets/swagger-ui.css'

function loadScript(src: string): Promise<void> {
  const existing = document.querySelector<HTMLScriptElement>(`script[src="${src}"]`)
  if (existing && window.SwaggerUIBundle) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const script = existing ?? document.createElement('script')
    script.addEventListener('load', () => resolve(), { once: true })
    script.addEventListener('error', () => reject(new Error(`could not load ${src}`)), { once: true })
    if (!existing) {
      script.src = src
      script.async = true
      document.head.appendChild(script)
    }
  })
}

/**
 * The OpenAPI document rendered by Swagger UI. Reading only: "Try it out" is
 * off (the try-it page does that with a demo token, never a key), and the
 * public validator badge is off (it would call another host).
 */
export function ApiReference({ specUrl = '/openapi.json' }: { specUrl?: string }) {
  const ref = useRef<HTMLDivElement>(null)
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading')
  useEffect(() => {
    let cancelled = false
    loadScript(SCRIPT)
      .then(() => {
        if (cancelled || !ref.current || !window.SwaggerUIBundle) return
        window.SwaggerUIBundle({
          url: specUrl,
          domNode: ref.current,
          deepLinking: false,
          validatorUrl: null,
          supportedSubmitMethods: [],
          tryItOutEnabled: false,
          docExpansion: 'list',
          defaultModelsExpandDepth: 0,
          displayRequestDuration: false,
          onComplete: () => !cancelled && setState('ready'),
        })
      })
      .catch(() => !cancelled && setState('failed'))
    return () => {
      cancelled = true
    }
  }, [specUrl])
  return (
    <>
      <link rel="stylesheet" href={STYLE} precedence="default" />
      {state === 'loading' ? (
        <p className="muted" role="status">
          Loading the API reference…
        </p>
      ) : null}
      {state === 'failed' ? (
        <p className="alert error" role="alert">
          The reference viewer could not load. The raw document is at <a href={specUrl}>{specUrl}</a>.
        </p>
      ) : null}
      <div className="reference-frame" data-testid="api-reference" aria-busy={state === 'loading'}>
        <div ref={ref} />
      </div>
    </>
  )
}
