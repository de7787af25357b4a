import { SCOPES } from '@/lib/scopes'
import type { V1Context } from '@/server/api/trpc/v1'
import { issueDemoToken } from '@/server/credentials/demo-tokens'
import type { DemoTokenResource } from './issue.schema'

/** Issues a demo token for the client; the response must not be stored by any cache. */
export async function issueDemoTokenHandler(
  ctx: Pick<V1Context, 'config' | 'db' | 'clientIp' | 'responseHeaders'>,
): Promise<DemoTokenResource> {
  const { token, expiresAt } = await issueDemoToken(ctx.db, { clientIp: ctx.clientIp })
  ctx.responseHeaders['Cache-Control'] = 'no-store'
  const limits = ctx.config.RATE_LIMIT_DEMO
  return {
    token,
    expires_at: expiresAt.toISOString(),
    scopes: [...SCOPES],
    limits: {
      requests_per_second: limits.perSecond ?? 0,
      requests_per_minute: limits.perMinute ?? 0,
      concurrent: limits.concurrent ?? 0,
    },
  }
}
