import type { Metadata } from 'next'
import { endpointsFromOpenApi } from '@/components/try/endpoints'
import { TryConsole } from '@/components/try/try-console'
import { openApiDocument } from '@/server/rest/openapi'
import { getServices } from '@/server/services/next-services'

export const dynamic = 'force-dynamic'

export const metadata: Metadata = { title: 'Try it' }

export default function TryPage() {
  const { config } = getServices()
  const endpoints = endpointsFromOpenApi(
    openApiDocument(config) as { paths?: Record<string, Record<string, unknown>> },
  )
  return (
    <>
      <h1>Try the API</h1>
      <p className="lead" style={{ marginTop: 0 }}>
        Pick an endpoint, fill in its parameters and send. The page checks parameters with the API’s own
        rules, shows the status, the rate-limit headers and the JSON, and follows{' '}
        <code>next_page_params</code> in one click. Only short-lived demo tokens are used here — never put a
        portal key in a browser. To browse the data rather than the JSON, open the{' '}
        <a href="/explore">explorer</a>: it is built on these same endpoints and the same demo token.
      </p>
      <TryConsole endpoints={endpoints} baseUrl={config.PUBLIC_URL} />
    </>
  )
}
