/**
 * next-auth's `redirect` callback (./next-auth.ts): where sign-in and sign-out
 * may send the browser. `url` is the request's callbackUrl, chosen by whoever
 * wrote the link: it may be relative, on a look-alike host, or no URL at all.
 * Every value ends on our own origin, and none throws (next-auth would answer
 * the request with a 500).
 */
export function sameOriginRedirect(url: string, baseUrl: string): string {
  const origin = new URL(baseUrl).origin
  const fallback = `${origin}/portal`
  let target: URL
  try {
    target = new URL(url, origin)
  } catch {
    return fallback
  }
  // href, not the text as sent: normalised and percent-encoded, so always a valid Location header.
  return target.origin === origin ? target.href : fallback
}
