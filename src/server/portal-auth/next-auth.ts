/**
 * next-auth in the web process: the options (./auth-options.ts) built once
 * from the process's services, and the signed-in user of a request.
 *
 * The secret is AUTH_SECRET, passed in the options; next-auth's base URL
 * (NEXTAUTH_URL, which it reads from the environment only) is set from
 * PUBLIC_URL by the web server before Next.js starts (src/server/web-server.ts).
 */
import 'server-only'
import { headers } from 'next/headers'
import { getServerSession, type NextAuthOptions } from 'next-auth'
import { cache } from 'react'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import { getServices } from '@/server/services/next-services'
import { buildAuthOptions } from './auth-options'
import { type SessionUser, sessionUserOf } from './session-user'

let cached: NextAuthOptions | undefined

export function authOptions(): NextAuthOptions {
  if (cached) return cached
  const { config, db, logger } = getServices()
  cached = buildAuthOptions({ config, db, logger, requestMeta })
  return cached
}

/** The signed-in user of the current request, or null. Memoised per request (layout and page both ask). */
export const getSessionUser = cache(
  async (): Promise<SessionUser | null> => sessionUserOf(await getServerSession(authOptions())),
)

/** Client IP (as the web server computed it) and user agent of the current request. */
export async function requestMeta(): Promise<{ clientIp: string; userAgent: string | null }> {
  const h = await headers()
  return { clientIp: h.get(CLIENT_IP_HEADER) ?? 'unknown', userAgent: h.get('user-agent') }
}
