/** The /docs guide's tables: scopes, error codes and rate limits (docs/portal.md). */

/** What each read scope grants. */
export function ScopesSection() {
  return (
    <section id="scopes" aria-labelledby="h-scopes">
      <h2 id="h-scopes">Scopes</h2>
      <p>Keys are issued with read scopes only. Give each key the fewest it needs.</p>
      <table>
        <thead>
          <tr>
            <th scope="col">Scope</th>
            <th scope="col">Grants</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>
              <code>read:collections</code>
            </td>
            <td>
              <code>GET</code>/<code>HEAD /v1/collections</code>,{' '}
              <code>GET /v1/collections/{'{address}'}</code>,{' '}
              <code>GET /v1/collections/{'{address}'}/traits</code>
            </td>
          </tr>
          <tr>
            <td>
              <code>read:nfts</code>
            </td>
            <td>
              <code>GET /v1/nfts/{'{address}/{tokenId}'}</code>,{' '}
              <code>GET /v1/nfts/{'{address}/{tokenId}'}/metadata</code>,{' '}
              <code>GET /v1/nfts/{'{address}/{tokenId}'}/owners</code>,{' '}
              <code>GET /v1/collections/{'{address}'}/nfts</code>
            </td>
          </tr>
          <tr>
            <td>
              <code>read:owners</code>
            </td>
            <td>
              <code>GET /v1/owners/{'{address}'}/nfts</code>,{' '}
              <code>GET /v1/owners/{'{address}'}/collections</code>,{' '}
              <code>GET /v1/collections/{'{address}'}/owners</code>
            </td>
          </tr>
          <tr>
            <td>
              <code>read:transfers</code>
            </td>
            <td>
              The transfer lists: <code>GET /v1/collections/{'{address}'}/transfers</code>,{' '}
              <code>GET /v1/nfts/{'{address}/{tokenId}'}/transfers</code>,{' '}
              <code>GET /v1/owners/{'{address}'}/transfers</code>
            </td>
          </tr>
          <tr>
            <td>
              <code>read:activity</code>
            </td>
            <td>
              <code>GET /v1/activity</code>, <code>GET /v1/activity/stream</code>
            </td>
          </tr>
          <tr>
            <td>
              <code>read:status</code>
            </td>
            <td>
              <code>GET /v1/indexer/status</code>
            </td>
          </tr>
        </tbody>
      </table>
    </section>
  )
}

/** The error envelope, each status with its code and whether to retry, and a retry loop. */
export function ErrorsSection() {
  return (
    <section id="errors" aria-labelledby="h-errors">
      <h2 id="h-errors">Errors and retries</h2>
      <p>
        Errors answer <code>{'{ "error": { "code", "message", "request_id" } }'}</code>; the request id is
        also in the <code>X-Request-Id</code> header — quote it when you report a problem.
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Code</th>
            <th scope="col">Retry?</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>400</td>
            <td>
              <code>INVALID_ARGUMENT</code> (also accept <code>INVALID_REQUEST</code>)
            </td>
            <td>No — fix the request</td>
          </tr>
          <tr>
            <td>401</td>
            <td>
              <code>UNAUTHORIZED</code>
            </td>
            <td>No — check or replace the credential</td>
          </tr>
          <tr>
            <td>403</td>
            <td>
              <code>FORBIDDEN</code>
            </td>
            <td>No — add the scope or the origin</td>
          </tr>
          <tr>
            <td>404</td>
            <td>
              <code>NOT_FOUND</code>
            </td>
            <td>No</td>
          </tr>
          <tr>
            <td>405</td>
            <td>
              <code>METHOD_NOT_ALLOWED</code>
            </td>
            <td>
              No — use a method <code>Allow</code> lists
            </td>
          </tr>
          <tr>
            <td>410</td>
            <td>
              <code>RESUME_POINT_EXPIRED</code> (live stream only)
            </td>
            <td>
              Yes, reconnecting without <code>Last-Event-ID</code>, then catching up from{' '}
              <code>/v1/activity</code>
            </td>
          </tr>
          <tr>
            <td>416</td>
            <td>
              <code>RANGE_NOT_SATISFIABLE</code> (media only)
            </td>
            <td>
              No — fix the <code>Range</code> header
            </td>
          </tr>
          <tr>
            <td>429</td>
            <td>
              <code>RATE_LIMITED</code>
            </td>
            <td>
              Yes, after <code>Retry-After</code> seconds
            </td>
          </tr>
          <tr>
            <td>503</td>
            <td>
              <code>SERVICE_UNAVAILABLE</code> (or <code>UNAVAILABLE</code>),{' '}
              <code>RATE_LIMITER_UNAVAILABLE</code>
            </td>
            <td>Yes, with backoff</td>
          </tr>
          <tr>
            <td>500</td>
            <td>
              <code>INTERNAL_ERROR</code>
            </td>
            <td>Yes, a few times, with backoff</td>
          </tr>
        </tbody>
      </table>
      <p>Retry 429 and 5xx with exponential backoff and full jitter, and honour Retry-After:</p>
      <pre>
        <code>{`async function call(url, init, attempts = 6) {
  for (let i = 0; ; i++) {
    const res = await fetch(url, init)
    if (![429, 500, 503].includes(res.status) || i === attempts - 1) return res
    const retryAfter = Number(res.headers.get('Retry-After')) || 0
    const backoff = Math.random() * Math.min(30, 0.5 * 2 ** i)   // full jitter, capped
    await new Promise((r) => setTimeout(r, 1000 * Math.max(retryAfter, backoff)))
  }
}`}</code>
      </pre>
    </section>
  )
}

/** The rate limits of portal keys and demo tokens, and their headers. */
export function LimitsSection() {
  return (
    <section id="limits" aria-labelledby="h-limits">
      <h2 id="h-limits">Rate limits</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Limit</th>
            <th scope="col">Portal key</th>
            <th scope="col">Demo token</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>Requests per second</td>
            <td>5</td>
            <td>1</td>
          </tr>
          <tr>
            <td>Requests per minute</td>
            <td>300</td>
            <td>30</td>
          </tr>
          <tr>
            <td>Concurrent requests</td>
            <td>10</td>
            <td>2</td>
          </tr>
        </tbody>
      </table>
      <p>
        Limits apply per key and per client address. Every limited response carries{' '}
        <code>RateLimit-Policy</code> and <code>RateLimit</code> (remaining requests <code>r</code>, seconds
        to reset <code>t</code>); a 429 adds <code>Retry-After</code> and <code>RateLimit-Reset</code>, both
        in seconds. A refused request is not counted. Demo tokens: 5 per minute per address, 15 minutes each.
      </p>
    </section>
  )
}
