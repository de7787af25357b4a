import { z } from 'zod'
import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import { issueDemoTokenHandler } from './issue.handler'
import { issueDemoTokenOutput } from './issue.schema'

export const demoTokenRouter = createV1Router({
  issue: v1Procedure({
    ipLimit: 'demoIssue',
    method: 'POST',
    path: '/v1/demo-token',
    tags: ['Authentication'],
    summary: 'Issue a demo token',
    description:
      'Issues a read-only demo credential with all six read scopes, valid 15 minutes, under the demo limits (1 request per second, 30 per minute, 2 concurrent). Takes no credential and no body (an Authorization header is ignored). At most 5 issuances per minute per client IP. Only a hash of the token is kept: a lost token cannot be retrieved; request a new one. Meant for trying endpoints, not for application traffic. A query parameter is refused with 400 (the endpoint takes none); otherwise it answers 200, 429 or 503.',
    successDescription: 'The demo token. Not to be cached (`Cache-Control: no-store`).',
    errorResponses: [400, 429, 503],
  })
    .input(z.void())
    .output(responseSchema(issueDemoTokenOutput))
    .mutation(async ({ ctx }) => ({ data: await issueDemoTokenHandler(ctx) })),
})
