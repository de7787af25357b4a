/**
 * next-auth's endpoints (csrf, session, callback/siwe, signout). Options are
 * built on first use from the configuration contract (./server/auth/next-auth);
 * requests next-auth would answer with a 500 are answered before it
 * (./server/auth/auth-request-guard).
 */

import type { NextRequest } from 'next/server'
import NextAuth from 'next-auth'
import { guardAuthRequest } from '@/server/auth/auth-request-guard'
import { authOptions } from '@/server/auth/next-auth'

export const dynamic = 'force-dynamic'

type Context = { params: Promise<{ nextauth: string[] }> }

async function handler(req: NextRequest, context: Context): Promise<Response> {
  const { nextauth } = await context.params
  return guardAuthRequest(req, nextauth[0]) ?? NextAuth(req, context, authOptions())
}

export { handler as GET, handler as POST }
