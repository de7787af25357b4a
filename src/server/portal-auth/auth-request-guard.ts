/**
 * What /api/auth answers before next-auth sees a request (docs/portal.md,
 * "next-auth's endpoints"). Anyone can send these requests; next-auth would
 * answer them with a 500 and an error-level log line of their choosing:
 *  - `POST _log`: next-auth's browser client reports its own errors there, at
 *    whatever level and with whatever text the sender writes. Accepted and
 *    dropped: a browser's report is not the server's error.
 *  - `callback/<provider>` by anything but POST: the credentials provider has
 *    no GET callback (next-auth: 500). 405.
 *  - a `callbackUrl` parameter or callback-url cookie that is neither a path
 *    nor an http(s) URL (next-auth: 500, or a redirect to its error page, and
 *    an error log). 400; the cookie is cleared with it.
 *  - a POST body over AUTH_MAX_BODY_BYTES (next-auth reads any body whole):
 *    413, read no further.
 */
import { NextRequest } from 'next/server'
import { ApiError } from '@/server/errors/api-error'
import { errorResponse } from '@/server/errors/error-body'
import { readCappedBody } from '@/server/http/capped-body'

/** Largest body next-auth's endpoints take: a sign-in's message, signature and CSRF token fit in a few KiB. */
export const AUTH_MAX_BODY_BYTES = 16 * 1024

const CALLBACK_URL_COOKIES = ['next-auth.callback-url', '__Secure-next-auth.callback-url']

/** The check next-auth applies to a callback URL before anything else (core/lib/assert). */
function acceptedByNextAuth(url: string): boolean {
  try {
    return /^https?:$/.test(new URL(url, url.startsWith('/') ? 'http://localhost' : undefined).protocol)
  } catch {
    return false
  }
}

/** The answer to a request next-auth must not see, or undefined to hand it over. */
export function guardAuthRequest(req: NextRequest, action: string | undefined): Response | undefined {
  if (action === '_log') return new Response(null, { status: 204 })
  if (action === 'callback' && req.method !== 'POST') {
    return errorResponse(
      new ApiError('METHOD_NOT_ALLOWED', 'Sign-in posts its message and signature here; use POST.', {
        headers: { Allow: 'POST' },
      }),
    )
  }
  const callbackUrls = req.nextUrl.searchParams.getAll('callbackUrl')
  if (callbackUrls.some((url) => !acceptedByNextAuth(url))) {
    return errorResponse(
      new ApiError('INVALID_ARGUMENT', 'callbackUrl: must be a path or an http(s) URL of this site.'),
    )
  }
  // The cookies as next-auth reads them (Next.js's parsing).
  const badCookie = CALLBACK_URL_COOKIES.find((name) => {
    const value = req.cookies.get(name)?.value
    return value !== undefined && !acceptedByNextAuth(value)
  })
  if (badCookie) {
    const secure = badCookie.startsWith('__Secure-') ? '; Secure' : ''
    return errorResponse(
      new ApiError('INVALID_ARGUMENT', 'The callback-url cookie is no URL; it has been cleared.'),
      { 'Set-Cookie': `${badCookie}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure}` },
    )
  }
  return undefined
}

/** The request with its body read within AUTH_MAX_BODY_BYTES, to hand to next-auth; or the 413. */
export async function guardAuthBody(req: NextRequest): Promise<NextRequest | Response> {
  if (req.method !== 'POST' || !req.body) return req
  let body: Uint8Array<ArrayBuffer> | undefined
  try {
    body = await readCappedBody(req, AUTH_MAX_BODY_BYTES)
  } catch (err) {
    if (err instanceof ApiError) return errorResponse(err)
    throw err
  }
  return new NextRequest(req.url, { method: req.method, headers: req.headers, body })
}
