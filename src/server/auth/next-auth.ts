/**
 * next-auth (v4) for the developer portal: one credentials provider, "siwe",
 * whose authorize() is Sign-In with Ethereum (./siwe.ts), and a JWT session
 * in an http-only, SameSite=Lax cookie (Secure, with the __Secure- prefix,
 * when PUBLIC_URL is https).
 *
 * The secret is AUTH_SECRET, passed in the options; next-auth's base URL
 * (NEXTAUTH_URL, which it reads from the environment only) is set from
 * PUBLIC_URL by the web server before Next.js starts (src/server/http/server.ts).
 */
import 'server-only'
import { headers } from 'next/headers'
import { getServerSession, type NextAuthOptions } from 'next-auth'
import CredentialsProvider from 'next-auth/providers/credentials'
import { cache } from 'react'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import { getServices } from '@/server/services'
import { sameOriginRedirect } from './redirect'
import type { SessionUser } from './session-user'
import { recordSignIn, SiweError, siweChainClient, siweExpectations, verifySiweSignIn } from './siwe'

declare module 'next-auth' {
  /** What the session cookie claims (users.id as a decimal string); getSessionUser checks it. */
  interface Session {
    user: { id: string; address: string }
  }
  interface User {
    id: string
    address: string
  }
}

declare module 'next-auth/jwt' {
  interface JWT {
    address?: string
  }
}

/** Sessions last a working day; the cookie is refreshed at most hourly. */
export const SESSION_MAX_AGE_S = 8 * 60 * 60

let cached: NextAuthOptions | undefined

export function authOptions(): NextAuthOptions {
  if (cached) return cached
  const { config, db, logger } = getServices()
  if (!config.AUTH_SECRET) throw new Error('AUTH_SECRET is not set: start the service with `npm start`')
  const secure = config.PUBLIC_URL.startsWith('https://')
  const expect = siweExpectations(config)

  cached = {
    secret: config.AUTH_SECRET,
    useSecureCookies: secure,
    session: { strategy: 'jwt', maxAge: SESSION_MAX_AGE_S, updateAge: 60 * 60 },
    jwt: { maxAge: SESSION_MAX_AGE_S },
    pages: { signIn: '/portal', error: '/portal' },
    providers: [
      CredentialsProvider({
        id: 'siwe',
        name: 'Ethereum',
        credentials: {
          message: { label: 'Message', type: 'text' },
          signature: { label: 'Signature', type: 'text' },
        },
        async authorize(credentials, req) {
          const message = credentials?.message ?? ''
          const signature = credentials?.signature ?? ''
          const requestHeaders = (req?.headers ?? {}) as Record<string, string | undefined>
          try {
            const verified = await verifySiweSignIn({
              db,
              client: siweChainClient(config),
              expect,
              message,
              signature,
            })
            const user = await recordSignIn(db, {
              address: verified.address,
              contractWallet: verified.contractWallet,
              clientIp: requestHeaders[CLIENT_IP_HEADER] ?? null,
              userAgent: requestHeaders['user-agent'] ?? null,
            })
            logger.info({ userId: user.id, contractWallet: verified.contractWallet }, 'portal sign-in')
            return user
          } catch (err) {
            if (err instanceof SiweError) {
              logger.info({ code: err.reason, detail: err.detail }, 'portal sign-in refused')
              // next-auth passes the message to the browser as `error`: a code, never details.
              throw new Error(err.reason)
            }
            logger.error({ err }, 'portal sign-in failed')
            throw new Error('SIGN_IN_FAILED')
          }
        },
      }),
    ],
    callbacks: {
      jwt({ token, user }) {
        if (user) {
          token.sub = user.id
          token.address = user.address
        }
        return token
      },
      session({ session, token }) {
        session.user = { id: token.sub ?? '', address: token.address ?? '' }
        return session
      },
      // Only same-origin redirects, whatever a callbackUrl says.
      redirect: ({ url, baseUrl }) => sameOriginRedirect(url, baseUrl),
    },
    logger: {
      error: (code, metadata) => logger.error({ code, metadata }, 'next-auth error'),
      warn: (code) => logger.warn({ code }, 'next-auth warning'),
      debug: () => {},
    },
  }
  return cached
}

/**
 * The signed-in user of the current request, or null. The session is only
 * believed when its user still exists with the same address. Memoised per
 * request (layout and page both ask).
 */
export const getSessionUser = cache(async (): Promise<SessionUser | null> => {
  const session = await getServerSession(authOptions())
  const claimed = session?.user
  if (!claimed?.id || !/^[0-9]{1,19}$/.test(claimed.id)) return null
  const user = await getServices().db.prisma.user.findUnique({ where: { id: BigInt(claimed.id) } })
  if (!user || user.address !== claimed.address) return null
  return { id: user.id, address: user.address }
})

/** Client IP (as the web server computed it) and user agent of the current request. */
export async function requestMeta(): Promise<{ clientIp: string; userAgent: string | null }> {
  const h = await headers()
  return { clientIp: h.get(CLIENT_IP_HEADER) ?? 'unknown', userAgent: h.get('user-agent') }
}
