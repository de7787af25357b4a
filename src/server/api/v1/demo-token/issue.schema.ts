import { z } from 'zod'
import { SCOPES } from '@/lib/scopes'

export const demoToken = z
  .object({
    token: z.string().describe('`demo_` + 43 base64url characters. Shown once; only its hash is kept.'),
    expires_at: z.string().describe('RFC 3339 timestamp, UTC: 15 minutes after issuance.'),
    scopes: z.array(z.enum(SCOPES)),
    limits: z.object({
      requests_per_second: z.number().int(),
      requests_per_minute: z.number().int(),
      concurrent: z.number().int(),
    }),
  })
  .meta({ id: 'DemoToken' })

export const issueDemoTokenOutput = z.object({ data: demoToken })

export type DemoTokenResource = z.infer<typeof demoToken>
