/**
 * next-auth's endpoints (csrf, session, callback/siwe, signout). Anyone can
 * call them, so they are admitted like the portal's procedures — the client
 * IP's limit (policy `ipAuth`: RATE_LIMIT_PORTAL's numbers, a bucket of its
 * own; docs/portal.md, "Limits") — before anything else. Options are built on
 * first use from the configuration contract (src/server/portal-auth/next-auth.ts);
 * requests next-auth would answer with a 500, and bodies over its cap, are
 * answered before it (src/server/portal-auth/auth-request-guard.ts).
 */

import type { NextRequest } from 'next/server'
import NextAuth from 'next-auth'
import { admitPortalRequest } from '@/server/api/portal/handler'
import { guardAuthBody, guardAuthRequest } from '@/server/portal-auth/auth-request-guard'
import { authOptions } from '@/server/portal-auth/next-auth'
import { getServices } from '@/server/services/next-services'

export const dynamic = 'force-dynamic'

type Context = { params: Promise<{ nextauth: string[] }> }

async function handler(req: NextRequest, context: Context): Promise<Response> {
  const { nextauth } = await context.params
  return admitPortalRequest(
    getServices(),
    req,
    async (access) => {
      try {
        const refusal = guardAuthRequest(req, nextauth[0])
        if (refusal) return refusal
        const bounded = await guardAuthBody(req)
        if (bounded instanceof Response) return bounded
        return await NextAuth(bounded, context, authOptions())
      } finally {
        access.release()
      }
    },
    'ipAuth',
  )
}

export { handler as GET, handler as POST }
