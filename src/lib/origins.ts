/**
 * The browser origins an API key may allow (docs/auth.md, "Allowed origins"):
 * scheme and host (and port) only, each listed in full. One parser for the
 * portal's form and the server's check, so both refuse the same text with the
 * same words.
 */
export const MAX_ALLOWED_ORIGINS = 20
export const MAX_ORIGIN_LENGTH = 200

/** The origin's canonical form (`https://app.example.com[:port]`), or why the text is not one. */
export function parseOrigin(text: string): { origin: string } | { problem: string } {
  if (text.length > MAX_ORIGIN_LENGTH) return { problem: `is longer than ${MAX_ORIGIN_LENGTH} characters` }
  // The URL parser takes `*` for a host character: a pattern would be stored and never match.
  if (text.includes('*'))
    return {
      problem: 'is a pattern: wildcards are not supported, list each origin like https://app.example.com',
    }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { problem: 'is not an origin like https://app.example.com' }
  }
  const pathless = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/?$/i.test(text)
  if (!/^https?:$/.test(url.protocol) || url.username || url.password || !pathless)
    return { problem: 'is not an origin: scheme and host only, like https://app.example.com' }
  return { origin: url.origin }
}
