/**
 * next-auth's endpoints (csrf, session, callback/siwe, signout). Options are
 * built on first use from the configuration contract (./server/auth/next-auth).
 */

import type { NextRequest } from 'next/server'
import NextAuth from 'next-auth'
import { authOptions } from '@/server/auth/next-auth'

export const dynamic = 'force-dynamic'

type Context = { params: Promise<{ nextauth: string[] }> }

function handler(req: NextRequest, context: Context): Promise<Response> {
  return NextAuth(req, context, authOptions())
}

export { handler as GET, handler as POST }
