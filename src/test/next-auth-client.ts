/**
 * next-auth's real handlers (csrf, callback/siwe, session, signout) and
 * getServerSession, driven in-process with a cookie jar — the browser's part
 * of the portal's sign-in without Next.js. Requests go through next-auth's
 * pages-API entry point (plain request and response objects); the App Router
 * route (src/app/api/auth) hands the very same options to the same core.
 *
 * next-auth reads its base URL from NEXTAUTH_URL: set it before use.
 */
import NextAuth, { getServerSession, type NextAuthOptions, type Session } from 'next-auth'
import { type Address, type Hex, verifyMessage } from 'viem'
import type { SiweChainClient } from '@/server/portal-auth/siwe'

interface Captured {
  status: number
  headers: Map<string, string | string[]>
  body: unknown
}

function fakeResponse(captured: Captured) {
  const res = {
    status(code: number) {
      captured.status = code
      return res
    },
    getHeader: (name: string) => captured.headers.get(name.toLowerCase()),
    setHeader(name: string, value: string | string[]) {
      captured.headers.set(name.toLowerCase(), value)
      return res
    },
    json(body: unknown) {
      captured.body = body
    },
    send(body: unknown) {
      captured.body = body
    },
    end() {},
  }
  return res
}

export class NextAuthTestClient {
  /** The browser's cookies for the service: name → value. */
  readonly cookies = new Map<string, string>()

  constructor(
    private readonly options: NextAuthOptions,
    private readonly headers: Record<string, string> = {},
  ) {}

  private requestHeaders(): Record<string, string> {
    const cookie = [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ')
    return { ...this.headers, ...(cookie ? { cookie } : {}) }
  }

  private keep(setCookie: string | string[] | undefined) {
    for (const line of [setCookie ?? []].flat()) {
      const [pair = '', ...attributes] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const value = decodeURIComponent(pair.slice(eq + 1).trim())
      const removed = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))
      if (removed || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  /** One request to /api/auth/<action>[/<provider>]. */
  async request(
    method: 'GET' | 'POST',
    path: [string, ...string[]],
    body?: Record<string, string>,
  ): Promise<{ status: number; body: unknown }> {
    const captured: Captured = { status: 200, headers: new Map(), body: undefined }
    const req = {
      method,
      query: { nextauth: path },
      body,
      cookies: Object.fromEntries(this.cookies),
      headers: this.requestHeaders(),
    }
    await NextAuth(req as never, fakeResponse(captured) as never, this.options)
    this.keep(captured.headers.get('set-cookie'))
    return { status: captured.status, body: captured.body }
  }

  private async csrfToken(): Promise<string> {
    const { body } = await this.request('GET', ['csrf'])
    return (body as { csrfToken: string }).csrfToken
  }

  /** Posts message and signature to the credentials callback: null on success, else the refusal code. */
  async signIn(message: string, signature: string): Promise<string | null> {
    const csrfToken = await this.csrfToken()
    const { body } = await this.request('POST', ['callback', 'siwe'], {
      message,
      signature,
      csrfToken,
      json: 'true',
    })
    const url = (body as { url?: string } | undefined)?.url
    if (!url) return 'NO_URL'
    return new URL(url).searchParams.get('error')
  }

  /** GET /api/auth/session, as the browser polls it: {} when signed out. */
  async session(): Promise<Partial<Session>> {
    return (await this.request('GET', ['session'])).body as Partial<Session>
  }

  /** POST /api/auth/signout with next-auth's CSRF token. */
  async signOut(): Promise<void> {
    const csrfToken = await this.csrfToken()
    await this.request('POST', ['signout'], { csrfToken, json: 'true' })
  }

  /** What a server component or /api/trpc sees of this browser's request (getServerSession). */
  async serverSession(options: NextAuthOptions = this.options): Promise<Session | null> {
    const headers: Record<string, string | string[]> = {}
    const res = {
      getHeader: (n: string) => headers[n.toLowerCase()],
      setHeader: (n: string, v: string | string[]) => {
        headers[n.toLowerCase()] = v
      },
    }
    const req = { headers: this.requestHeaders(), cookies: Object.fromEntries(this.cookies) }
    return getServerSession(req as never, res as never, options)
  }
}

/** A chain client that verifies EOA signatures locally (no node needed). */
export function localChainClient(): SiweChainClient {
  return {
    verifyMessage: (args: { address: Address; message: string; signature: Hex }) => verifyMessage(args),
    getCode: async () => undefined,
  }
}
