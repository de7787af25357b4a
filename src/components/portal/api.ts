'use client'
/**
 * The portal's client for its internal tRPC procedures (/api/trpc, the
 * `keys` router): API keys and the audit trail of the signed-in user. View
 * shapes mirror src/server/auth/api-keys.ts and audit.ts, which the
 * procedures return as they are.
 */
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client'
import type { inferRouterOutputs } from '@trpc/server'
import type { Scope } from '@/lib/scopes'
import type { PortalRouter } from '@/server/api/portal/router'

type Outputs = inferRouterOutputs<PortalRouter>['keys']

export type ApiKeyView = Outputs['list'][number]
export type KeyWithSecret = Outputs['create']
export type AuditPage = Outputs['auditEvents']
export type AuditEventView = AuditPage['items'][number]

const client = createTRPCClient<PortalRouter>({
  links: [httpBatchLink({ url: '/api/trpc', maxItems: 4 })],
})

export const portalApi = {
  listKeys: () => client.keys.list.query(),
  createKey: (input: { name: string; scopes: Scope[]; allowedOrigins: string[] }) =>
    client.keys.create.mutate({
      name: input.name,
      scopes: input.scopes,
      allowed_origins: input.allowedOrigins,
    }),
  rotateKey: (keyId: string, graceSeconds: number) =>
    client.keys.rotate.mutate({ id: keyId, grace_seconds: graceSeconds }),
  revokeKey: (keyId: string) => client.keys.revoke.mutate({ id: keyId }),
  listAudit: (limit: number, cursor?: string) =>
    client.keys.auditEvents.query(cursor ? { limit, cursor } : { limit }),
}

/** A message fit for the page from a procedure's error. */
export function errorMessage(err: unknown): string {
  if (err instanceof TRPCClientError) {
    const code = (err.data as { code?: string } | undefined)?.code
    if (code === 'UNAUTHORIZED') return 'Your session has ended. Reload the page and sign in again.'
    if (code === 'FORBIDDEN') return 'The portal refused this request. Reload the page and try again.'
    return err.message
  }
  return err instanceof Error ? err.message : 'Something went wrong.'
}
