/**
 * CSRF protection of the portal's internal tRPC endpoint (see route.ts).
 */

export function refuse(status: number, code: string, message: string): Response {
  return Response.json(
    { error: { code, message } },
    { status, headers: { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } },
  )
}

/** Same-origin check: null when the request may proceed, else the refusal. */
export function csrfRefusal(req: Request, publicOrigin: string): Response | null {
  const site = req.headers.get('sec-fetch-site')
  if (site === 'cross-site' || site === 'same-site') {
    return refuse(403, 'FORBIDDEN', 'Cross-site requests are not accepted.')
  }
  if (req.method === 'GET') return null
  const origin = req.headers.get('origin')
  if (origin !== null ? origin !== publicOrigin : site !== 'same-origin') {
    return refuse(403, 'FORBIDDEN', 'This request must come from the portal itself.')
  }
  const type = req.headers.get('content-type') ?? ''
  if (!type.toLowerCase().startsWith('application/json')) {
    return refuse(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send a JSON body.')
  }
  return null
}
