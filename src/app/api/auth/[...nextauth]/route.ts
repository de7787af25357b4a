/**
 * next-auth's endpoints (csrf, session, callback/siwe, signout). Options are
 * built on first use from the configuration contract (./server/auth/next-auth);
 * requests next-auth would answer with a 500, and bodies over its cap, are
 * answered before it (./server/auth/auth-request-guard).
 */

import type { NextRequest } from 'next/server'
import NextAuth from 'next-auth'
import { guardAuthBody, guardAuthRequest } from '@/server/auth/auth-request-guard'
import { authOptions } from '@/server/auth/next-auth'

export const dynamic = 'force-dynamic'

type Context = { params: Promise<{ nextauth: string[] }> }

async function handler(req: NextRequest, context: Context): Promise<Response> {
  const { nextauth } = await context.params
  const refusal = guardAuthRequest(req, nextauth[0])
  if (refusal) return refusal
  const bounded = await guardAuthBody(req)
  return bounded instanceof Response ? bounded : NextAuth(bounded, context, authOptions())
}

export { handler as GET, handler as POST }
