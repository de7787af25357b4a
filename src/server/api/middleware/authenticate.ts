/**
 * Authentication of /v1 procedures (the apiProcedure tier). Runs before the
 * procedure's input is parsed, so the order of checks is the one DESIGN §4
 * fixes: (per-IP limit, in the REST layer) → credential 401 → per-credential
 * limit 429 → scope and origin 403 → parameters 400 → handler.
 */
import type { ApiContext, ApiMeta } from '@/server/api/trpc'
import { canonicalOrigin } from '@/server/auth/cors-origins'
import { displayPrefix, parseAuthorization } from '@/server/auth/secrets'
import type { VerifiedCredential } from '@/server/auth/verifier'
import { ApiError } from '@/server/errors/api-error'

const HOW = 'Send Authorization: Bearer <API key or demo token>.'

export async function authenticate(ctx: ApiContext, meta: ApiMeta | undefined): Promise<VerifiedCredential> {
  const access = ctx.requestAccess
  // Reached without the REST layer's limits (e.g. through the portal's
  // internal route): never serve it unlimited.
  if (!access) throw new ApiError('UNAUTHORIZED', `This endpoint is served under /v1 only. ${HOW}`)

  const presented = parseAuthorization(ctx.headers.authorization)
  // Logs name a key by its display prefix only; never the secret, never a demo token.
  const refused = (reason: string) =>
    ctx.logger.debug(
      {
        requestId: ctx.requestId,
        reason,
        credential: presented.kind === 'key' ? displayPrefix(presented.secret) : presented.kind,
      },
      'credential refused',
    )
  if (presented.kind === 'missing') {
    refused('missing')
    throw new ApiError('UNAUTHORIZED', `A bearer credential is required. ${HOW}`)
  }
  if (presented.kind === 'malformed') {
    refused('malformed')
    throw new ApiError('UNAUTHORIZED', `The credential is malformed. ${HOW}`)
  }

  const credential = await access.control.verifier.verify(presented)
  if (!credential) {
    refused('unknown, expired or revoked')
    throw new ApiError(
      'UNAUTHORIZED',
      presented.kind === 'demo'
        ? 'The demo token is unknown or expired; request a new one with POST /v1/demo-token.'
        : 'The API key is unknown, revoked or rotated out.',
    )
  }

  await access.limitCredential(credential)

  const scope = meta?.scope
  if (!scope) throw new ApiError('INTERNAL_ERROR', 'An unexpected error occurred.') // every apiProcedure names one
  if (!credential.scopes.includes(scope)) {
    throw new ApiError('FORBIDDEN', `This credential lacks the scope '${scope}' that this endpoint needs.`)
  }
  const origin = ctx.headers.origin
  if (origin !== undefined) {
    const normalized = canonicalOrigin(origin)
    if (normalized === undefined || !credential.allowedOrigins.includes(normalized)) {
      throw new ApiError(
        'FORBIDDEN',
        credential.kind === 'key'
          ? `Origin ${JSON.stringify(origin)} is not allowed for this API key; add it to the key's allowed origins in the portal.`
          : `Demo tokens are accepted from ${access.control.publicOrigin} only.`,
      )
    }
  }

  if (credential.kind === 'key') access.control.lastUsed.touch(credential.id)
  ctx.logger.trace({ requestId: ctx.requestId, credential: credential.subject }, 'credential accepted')
  return credential
}
