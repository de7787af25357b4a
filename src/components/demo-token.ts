/**
 * The browser's one way of holding a demo token (docs/portal.md, "Try it"; docs/explorer.md):
 * issued by POST /v1/demo-token through the typed client, kept in this tab's sessionStorage
 * under one key, and shared by every page that calls the API from the browser (the try page,
 * the docs' "Try it out" and the explorer). A token is never put anywhere else.
 */
import { createNftDataClient, type DemoToken, NftDataApiError } from '@/client'

export const DEMO_TOKEN_STORAGE_KEY = 'nft-api-demo-token'

/** The tab's token from sessionStorage, if it has not expired. */
export function loadDemoToken(now = Date.now()): DemoToken | null {
  try {
    const raw = sessionStorage.getItem(DEMO_TOKEN_STORAGE_KEY)
    const token = raw ? (JSON.parse(raw) as DemoToken) : null
    return token && new Date(token.expires_at).getTime() > now ? token : null
  } catch {
    return null
  }
}

function saveDemoToken(token: DemoToken) {
  try {
    sessionStorage.setItem(DEMO_TOKEN_STORAGE_KEY, JSON.stringify(token))
  } catch {
    // Storage refused (a private window's quota): the token lives as long as the page.
  }
}

/** Forgets the stored token (the API refused it: revoked, or the service's secret changed). */
export function forgetDemoToken(token: string) {
  if (loadDemoToken()?.token === token) sessionStorage.removeItem(DEMO_TOKEN_STORAGE_KEY)
}

/**
 * Issues a new demo token and stores it for the tab. Not retried: a 429 (5 tokens per minute
 * per address) is told to the user at once, with the wait, rather than waited out in silence.
 */
export async function issueDemoToken(): Promise<DemoToken> {
  const client = createNftDataClient({ baseUrl: window.location.origin, retry: { attempts: 1 } })
  try {
    const token = await client.issueDemoToken()
    saveDemoToken(token)
    return token
  } catch (err) {
    if (err instanceof NftDataApiError) {
      if (err.status === 429) {
        const wait = Number(err.headers.get('Retry-After'))
        throw new Error(
          `Demo tokens are limited to 5 per minute per address. Try again in ${Number.isFinite(wait) && wait > 0 ? wait : 60} s.`,
        )
      }
      throw new Error(
        err.envelope.error.message && err.code !== 'BAD_RESPONSE' && err.code !== 'INTERNAL_ERROR'
          ? err.envelope.error.message
          : `The token endpoint answered ${err.status}.`,
      )
    }
    throw err
  }
}
