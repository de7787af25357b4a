/**
 * POST /api/siwe/nonce: a single-use Sign-In with Ethereum nonce and the
 * values the message must carry (domain, URI, chain id). Limited per client
 * IP, since each call writes a row.
 */
import { NextResponse } from 'next/server'
import { ApiError } from '@/server/errors/api-error'
import { errorResponse } from '@/server/errors/error-body'
import { requestMeta } from '@/server/portal-auth/next-auth'
import { issueNonce, SIWE_STATEMENT, siweExpectations } from '@/server/portal-auth/siwe'
import { allowNonceRequest } from '@/server/portal-auth/siwe-nonce-limit'
import { getServices } from '@/server/services/next-services'

export const dynamic = 'force-dynamic'

const NO_STORE = { 'Cache-Control': 'no-store' }

export async function POST(): Promise<Response> {
  const { config, db, logger } = getServices()
  const { clientIp } = await requestMeta()
  const limit = allowNonceRequest(clientIp)
  if (!limit.allowed) {
    return errorResponse(
      new ApiError('RATE_LIMITED', 'Too many sign-in attempts; try again shortly.', {
        headers: { 'Retry-After': String(limit.retryAfterS) },
      }),
    )
  }
  try {
    const { nonce, expiresAt } = await issueNonce(db)
    const expect = siweExpectations(config)
    return NextResponse.json(
      {
        nonce,
        expires_at: expiresAt.toISOString(),
        domain: expect.domain,
        uri: config.PUBLIC_URL,
        chain_id: expect.chainId,
        statement: SIWE_STATEMENT,
      },
      { headers: NO_STORE },
    )
  } catch (err) {
    logger.error({ err }, 'issuing a sign-in nonce failed')
    return errorResponse(new ApiError('SERVICE_UNAVAILABLE', 'Sign-in is unavailable right now.'))
  }
}
