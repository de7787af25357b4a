'use client'
/**
 * The portal's typed access to its internal tRPC procedures (/api/trpc, the
 * `keys` router) through @trpc/tanstack-react-query: components call
 * `useTRPC()` and hand its queryOptions/mutationOptions to React Query, so
 * query keys come from the procedure paths, never from hand-written arrays.
 * View shapes are the procedures' outputs (src/server/api/portal/keys/api-keys.ts, audit.ts).
 */
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client'
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server'
import { createTRPCContext } from '@trpc/tanstack-react-query'
// The one place the portal names the server's router type.
import type { PortalRouter } from '@/server/api/portal/router'

export type { PortalRouter }

export const { TRPCProvider, useTRPC } = createTRPCContext<PortalRouter>()

export function createPortalTrpcClient() {
  return createTRPCClient<PortalRouter>({
    links: [httpBatchLink({ url: '/api/trpc', maxItems: 4 })],
  })
}

type Outputs = inferRouterOutputs<PortalRouter>['keys']
type Inputs = inferRouterInputs<PortalRouter>['keys']

export type ApiKeyView = Outputs['list'][number]
export type KeyWithSecret = Outputs['create']
export type KeyUsage = Outputs['usage']
export type AuditPage = Outputs['auditEvents']
export type AuditEventView = AuditPage['items'][number]
/** The audit trail's filters (key, action, dates), shared by the list and the export. */
export type AuditFilterInput = Omit<NonNullable<Exclude<Inputs['auditEvents'], void>>, 'limit' | 'cursor'>
/** The export's file formats (GET /api/portal/audit-export, src/server/api/portal/keys/audit-export.ts). */
export type AuditExportFormat = 'csv' | 'json'

const UNREACHABLE = 'The portal could not reach the service. Try again in a moment.'

/** A message fit for the page from a procedure's error. */
export function errorMessage(err: unknown): string {
  if (err instanceof TRPCClientError) {
    const code = (err.data as { code?: string } | undefined)?.code
    if (code === 'UNAUTHORIZED') return 'Your session has ended. Reload the page and sign in again.'
    if (code === 'FORBIDDEN') return 'The portal refused this request. Reload the page and try again.'
    if (code === undefined) {
      // Refused before any procedure ran (rate limit, body cap): the service's error envelope.
      const refusal = (err.meta?.responseJSON as { error?: { message?: unknown } } | undefined)?.error
      if (typeof refusal?.message === 'string') return refusal.message
      // Otherwise the answer was not the portal's own (a proxy's error page, a dropped connection).
      return UNREACHABLE
    }
    return err.message
  }
  return err instanceof Error ? err.message : 'Something went wrong.'
}
