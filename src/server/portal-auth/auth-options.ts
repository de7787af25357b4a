/**
 * next-auth (v4) options for the developer portal: one credentials provider,
 * "siwe", whose authorize() is Sign-In with Ethereum (./siwe.ts), and a JWT
 * session in an http-only, SameSite=Lax cookie (Secure, with the __Secure-
 * prefix, when PUBLIC_URL is https).
 *
 * The JWT only carries the id of a portal_sessions row (./portal-sessions.ts;
 * docs/auth.md, "Portal sessions"):
 *  - the session callback believes a session only while that row is live
 *    (not revoked, before its expires_at), one primary-key lookup per request;
 *    a dead one answers as signed out and next-auth clears the cookie;
 *  - the token's expiry is the row's absolute end, whatever next-auth's
 *    re-issuing on every session read would make of it (jwt.encode below);
 *  - sign-out (the signOut event) revokes the row.
 *
 * Built from explicit dependencies so that tests run the real callbacks;
 * ./next-auth.ts builds the web process's options from its services.
 */
import type { NextAuthOptions } from 'next-auth'
import { encode } from 'next-auth/jwt'
import CredentialsProvider from 'next-auth/providers/credentials'
import type { Config } from '@/config/env'
import type { Logger } from '@/config/logger'
import type { Database } from '@/db/database'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import { endPortalSession, liveSessionUser, type RequestMeta, SESSION_LIFETIME_MS } from './portal-sessions'
import { sameOriginRedirect } from './redirect'
import { SignInRefusals } from './sign-in-refusals'
import { recordSignIn, type SiweChainClient, SiweError, siweExpectations, verifySiweSignIn } from './siwe'
import { siweChainClient } from './siwe-chain'

declare module 'next-auth' {
  /** What the session answers: the user of a live portal session (users.id as a decimal string). */
  interface Session {
    user: { id: string; address: string }
  }
  interface User {
    id: string
    address: string
    sessionId: string
    /** The session's absolute end, epoch seconds. */
    sessionEnd: number
  }
}

declare module 'next-auth/jwt' {
  interface JWT {
    address?: string
    /** portal_sessions.id */
    sid?: string
    /** The session's absolute end, epoch seconds: the token never outlives it. */
    sessionEnd?: number
  }
}

/** Thrown by the session callback for a session that is over: next-auth answers signed out. */
export class SessionEndedError extends Error {
  constructor() {
    super('the portal session has ended')
    this.name = 'SessionEndedError'
  }
}

export interface AuthDependencies {
  config: Pick<Config, 'AUTH_SECRET' | 'PUBLIC_URL' | 'CHAIN_ID' | 'RPC_URL' | 'NFT_EMBEDDED_DEVNET'>
  db: Database
  logger: Logger
  /** Client IP and user agent of the current request (sign-out has no request of its own in next-auth). */
  requestMeta: () => Promise<RequestMeta>
  /** Default: a viem client on RPC_URL's endpoints (siweChainClient). */
  chainClient?: SiweChainClient
  /** Default: SESSION_LIFETIME_MS (tests use a short one). */
  sessionLifetimeMs?: number
}

const nowSeconds = () => Math.floor(Date.now() / 1000)

export function buildAuthOptions(deps: AuthDependencies): NextAuthOptions {
  const { config, db, logger } = deps
  if (!config.AUTH_SECRET) throw new Error('AUTH_SECRET is not set: start the service with `npm start`')
  const lifetimeMs = deps.sessionLifetimeMs ?? SESSION_LIFETIME_MS
  const maxAgeS = Math.ceil(lifetimeMs / 1000)
  const expect = siweExpectations(config)
  const refusals = new SignInRefusals(db)

  return {
    secret: config.AUTH_SECRET,
    useSecureCookies: config.PUBLIC_URL.startsWith('https://'),
    session: { strategy: 'jwt', maxAge: maxAgeS },
    jwt: {
      maxAge: maxAgeS,
      // next-auth re-encodes the token on every session read with exp = now + maxAge (a sliding
      // expiry); the token's own absolute end wins.
      encode: async (params) => {
        const end = params.token?.sessionEnd
        if (typeof end !== 'number') return encode({ ...params, maxAge: maxAgeS })
        // encode() reads the clock again after deriving its key: when a second boundary falls
        // between the two reads, exp would be one second past the end. Encode again then.
        for (;;) {
          const before = nowSeconds()
          const token = await encode({ ...params, maxAge: Math.max(0, end - before) })
          if (nowSeconds() === before) return token
        }
      },
    },
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
          const headers = (req?.headers ?? {}) as Record<string, string | undefined>
          const meta = {
            clientIp: headers[CLIENT_IP_HEADER] ?? null,
            userAgent: headers['user-agent'] ?? null,
          }
          try {
            const verified = await verifySiweSignIn({
              db,
              client: deps.chainClient ?? siweChainClient(config, logger),
              expect,
              message,
              signature,
            })
            const signedIn = await recordSignIn(
              db,
              { address: verified.address, contractWallet: verified.contractWallet, ...meta },
              { lifetimeMs },
            )
            logger.info({ userId: signedIn.id, contractWallet: verified.contractWallet }, 'portal sign-in')
            return {
              id: signedIn.id,
              address: signedIn.address,
              sessionId: signedIn.session.id,
              sessionEnd: Math.floor(signedIn.session.expiresAt.getTime() / 1000),
            }
          } catch (err) {
            if (err instanceof SiweError) {
              const audit = await refusals.record(message, err.reason, meta).catch((auditErr: unknown) => {
                logger.error({ err: auditErr }, 'recording a refused sign-in failed')
                return 'failed'
              })
              logger.info({ code: err.reason, detail: err.detail, audit }, 'portal sign-in refused')
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
      // Sign-in puts the session's id and end into the token; nothing later changes them.
      jwt({ token, user }) {
        if (user) {
          token.sub = user.id
          token.address = user.address
          token.sid = user.sessionId
          token.sessionEnd = user.sessionEnd
        }
        return token
      },
      async session({ session, token }) {
        const live = typeof token.sid === 'string' ? await liveSessionUser(db, token.sid) : null
        const refused = live !== null && expect.refusedAccounts.has(live.address)
        if (!live || refused || live.id.toString() !== token.sub || live.address !== token.address) {
          throw new SessionEndedError()
        }
        session.user = { id: live.id.toString(), address: live.address }
        session.expires = live.expiresAt.toISOString()
        return session
      },
      // Only same-origin redirects, whatever a callbackUrl says.
      redirect: ({ url, baseUrl }) => sameOriginRedirect(url, baseUrl),
    },
    events: {
      async signOut({ token }) {
        if (typeof token?.sid !== 'string') return
        // The row is revoked even when the request's IP and user agent cannot be read.
        const meta = await deps.requestMeta().catch(() => ({ clientIp: null, userAgent: null }))
        await endPortalSession(db, token.sid, meta)
      },
    },
    logger: {
      error: (code, metadata) => {
        const reason = code === 'JWT_SESSION_ERROR' ? clientTokenProblem(metadata) : undefined
        if (reason) {
          logger.debug({ code, reason }, 'portal session over')
          return
        }
        logger.error({ code, metadata }, 'next-auth error')
      },
      warn: (code) => logger.warn({ code }, 'next-auth warning'),
      debug: () => {},
    },
  }
}

/** jose's errors about a token (ERR_JWE_INVALID, ERR_JWT_EXPIRED, …): what the cookie held, not our failure. */
const TOKEN_ERROR = /^ERR_JW[AEKST]_/

/**
 * Why a session token is over, when it ended, expired or is no token of ours (garbage,
 * another secret's): anyone can send one, so it is routine, not an error-level line.
 */
function clientTokenProblem(metadata: unknown): string | undefined {
  const { name, code } = (metadata ?? {}) as { name?: unknown; code?: unknown }
  if (name === 'SessionEndedError') return name
  return typeof code === 'string' && TOKEN_ERROR.test(code) ? code : undefined
}
