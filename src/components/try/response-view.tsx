import type { Ref } from 'react'
import { JsonView } from './json-view'
import { BreakableUrl } from './path-text'
import { StatusExplanation } from './status-explanation'
import type { ApiResponse, DemoToken } from './types'

/** Response headers worth showing: rate limits, request id, freshness. */
const SHOWN_HEADERS =
  /^(ratelimit.*|retry-after|x-request-id|x-chain-head|x-confirmed-block|content-type|etag|cache-control)$/i

/** The page's pagination state from a 200 list answer. */
export function nextPageParams(response: ApiResponse | null): Record<string, unknown> | null {
  const body = response?.body as { pagination?: { next_page_params?: Record<string, unknown> } } | null
  return response?.status === 200 ? (body?.pagination?.next_page_params ?? null) : null
}

function isLastPage(response: ApiResponse): boolean {
  const body = response.body as { pagination?: { has_more?: boolean } } | null
  return response.status === 200 && body?.pagination?.has_more === false
}

/** Where a list answer stands: its page number when followed from the first page. */
function pageLabel(response: ApiResponse): string {
  const body = response.body as { pagination?: unknown } | null
  if (response.status !== 200 || !body?.pagination) return ''
  return response.page === null ? 'a page after the cursor sent ·' : `page ${response.page} ·`
}

export function ResponseView({
  response,
  responseRef,
  headingId,
  retryIn,
  limits,
  canFollow,
  onNextPage,
}: {
  response: ApiResponse
  responseRef: Ref<HTMLElement>
  headingId: string
  retryIn: number
  limits: DemoToken['limits'] | undefined
  canFollow: boolean
  onNextPage: () => void
}) {
  const next = nextPageParams(response)
  return (
    <section
      ref={responseRef}
      tabIndex={-1}
      aria-labelledby={headingId}
      data-testid="response"
      className="response"
    >
      <h2 id={headingId} className="response-head">
        Response
        <span className={`status-code s${String(response.status)[0]}`} data-testid="response-status">
          {response.status}
        </span>
        <span className="muted small">
          {response.ms} ms · {pageLabel(response)}{' '}
          <code className="small">
            {response.method} <BreakableUrl text={response.url} />
          </code>
        </span>
      </h2>
      <StatusExplanation response={response} retryIn={retryIn} limits={limits} />
      {next ? (
        <p>
          <button type="button" className="button" onClick={onNextPage} disabled={!canFollow}>
            Next page →
          </button>{' '}
          <span className="muted small">
            sends <code>{JSON.stringify(next)}</code> from <code>next_page_params</code>
          </span>
        </p>
      ) : isLastPage(response) ? (
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
  )
}
