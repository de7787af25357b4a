'use client'

import { type FormEvent, useEffect, useId } from 'react'
import { curlCommand } from './curl'
import { CurlCommand } from './curl-command'
import { EndpointList } from './endpoint-list'
import { buildUrl, type EndpointSpec, type ParamValues, startsFromCursor } from './endpoints'
import { mmss } from './format'
import { LiveActivity } from './live-activity'
import { RequestForm } from './request-form'
import { nextPageParams, ResponseView } from './response-view'
import { TokenPanel } from './token-panel'
import { useApiRequest } from './use-api-request'
import { useDemoToken } from './use-demo-token'
import { examplesFor, needsExamples, useLiveExamples } from './use-live-examples'
import { useNow } from './use-now'
import { usePacedFetch } from './use-paced-fetch'
import { useRequestForm } from './use-request-form'

/** The try-it page: demo token, endpoint list, parameter form, curl line and response. */
export function TryConsole({ endpoints, baseUrl }: { endpoints: EndpointSpec[]; baseUrl: string }) {
  const id = useId()
  const now = useNow(1000)
  const demo = useDemoToken(now)
  const pacedFetch = usePacedFetch(demo.token?.token, demo.token?.limits.requests_per_second ?? 1)
  const form = useRequestForm(endpoints)
  const request = useApiRequest(pacedFetch)
  const { endpoint, values } = form
  const examples = useLiveExamples(pacedFetch, demo.valid && needsExamples(endpoint))

  useEffect(() => {
    if (endpoint && examples) form.fillEmpty(examplesFor(endpoint, examples))
  }, [endpoint, examples, form.fillEmpty])

  const waitingForRetry = request.retryAt !== null && request.retryAt > now
  const canSend = demo.valid && !request.sending && !waitingForRetry

  function send(target: EndpointSpec, params: ParamValues, page: number | null) {
    if (!demo.valid) return
    const refused = form.check(target, params)
    if (refused) {
      document.getElementById(`${id}-p-${refused}`)?.focus()
      return
    }
    void request.send(target, params, page)
  }

  function select(next: EndpointSpec) {
    form.select(next)
    request.clear()
    // On a phone the form is below the endpoint list: bring it into view (docs/portal.md, "Try it").
    requestAnimationFrame(() => {
      const heading = document.getElementById(`${id}-title`)
      const top = heading?.getBoundingClientRect().top
      if (top !== undefined && (top < 0 || top > window.innerHeight))
        heading!.scrollIntoView({ block: 'start' })
    })
  }

  function followNextPage() {
    const next = nextPageParams(request.response)
    if (!endpoint || !next || !request.response) return
    // Copy every key and value of next_page_params over the filters of the request that answered.
    const params = { ...request.response.params }
    for (const [k, v] of Object.entries(next)) params[k] = String(v)
    form.setValues(params)
    const { page } = request.response
    send(endpoint, params, page === null ? null : page + 1)
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault()
    if (endpoint) send(endpoint, values, startsFromCursor(values) ? null : 1)
  }

  const blockedReason = !demo.valid
    ? { text: 'Get a demo token first.', live: false }
    : waitingForRetry
      ? { text: `You can send again in ${mmss((request.retryAt ?? now) - now)}.`, live: true }
      : null

  return (
    <div className="try">
      <div className="try-side">
        <TokenPanel demo={demo} headingId={`${id}-token`} />
        <EndpointList
          endpoints={endpoints}
          selectedId={form.selectedId}
          onSelect={select}
          headingId={`${id}-endpoints`}
        />
        <LiveActivity token={demo.valid ? demo.token?.token : undefined} headingId={`${id}-live`} />
      </div>

      <div className="try-main">
        {endpoint ? (
          <>
            <RequestForm
              endpoint={endpoint}
              idPrefix={id}
              headingId={`${id}-title`}
              values={values}
              errors={form.errors}
              onChange={form.setValue}
              onSubmit={onSubmit}
              canSend={canSend}
              sending={request.sending}
              blockedReason={blockedReason}
              examplesFilled={examples !== null && needsExamples(endpoint)}
            />
            <CurlCommand
              command={curlCommand(
                endpoint.method,
                `${baseUrl}${buildUrl(endpoint, values)}`,
                demo.token?.token,
              )}
              headingId={`${id}-curl`}
            />
            {request.error ? (
              <p className="alert error" role="alert">
                {request.error}
              </p>
            ) : null}
            {request.response ? (
              <ResponseView
                response={request.response}
                responseRef={request.responseRef}
                headingId={`${id}-response`}
                retryIn={request.retryAt ? request.retryAt - now : 0}
                limits={demo.token?.limits}
                canFollow={!request.sending && !waitingForRetry}
                onNextPage={followNextPage}
              />
            ) : null}
          </>
        ) : (
          <p className="muted">The API document lists no endpoints.</p>
        )}
      </div>
    </div>
  )
}
