/**
 * tRPC's error bodies (the portal's /api/trpc): an unexpected failure shows a
 * fixed sentence, never its own text (a database error names tables, values
 * and internals); a client error keeps its message, and an ApiError keeps its
 * meaning.
 */
import { fetchRequestHandler } from '@trpc/server/adapters/fetch'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ApiError } from '@/server/errors/api-error'
import { createPortalRouter, INTERNAL_MESSAGE, portalProcedure } from './portal'

const router = createPortalRouter({
  broken: portalProcedure.query(() => {
    throw new Error('Invalid `prisma.auditEvent.findMany()` invocation: value out of range for type bigint')
  }),
  strict: portalProcedure
    .input(z.object({ id: z.string().regex(/^[0-9]+$/, 'must be digits') }))
    .query(() => 'ok'),
  conflict: portalProcedure.query(() => {
    throw new ApiError('CONFLICT', 'A revoked key cannot be rotated.')
  }),
})

async function call(path: string): Promise<{ status: number; body: string }> {
  const res = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req: new Request(`http://localhost/api/trpc/${path}`),
    router,
    createContext: () =>
      ({ user: { id: 1n, address: '0x00000000000000000000000000000000000a11ce' } }) as never,
    onError: () => {},
  })
  return { status: res.status, body: await res.text() }
}

describe('tRPC error shape', () => {
  it('hides the text of an unexpected failure', async () => {
    const res = await call('broken')
    expect(res.status).toBe(500)
    expect(JSON.parse(res.body).error.message).toBe(INTERNAL_MESSAGE)
    expect(res.body).not.toContain('prisma')
    expect(res.body).not.toContain('bigint')
  })

  it('gives bad input as one sentence naming the field, not zod’s issue list', async () => {
    const res = await call(`strict?input=${encodeURIComponent(JSON.stringify({ id: 'x' }))}`)
    expect(res.status).toBe(400)
    expect(JSON.parse(res.body).error.data.code).toBe('BAD_REQUEST')
    expect(JSON.parse(res.body).error.message).toBe('id: must be digits')
  })

  it('maps an ApiError to the tRPC error of the same meaning, keeping its message', async () => {
    const res = await call('conflict')
    expect(res.status).toBe(409)
    const error = JSON.parse(res.body).error
    expect(error.data.code).toBe('CONFLICT')
    expect(error.message).toBe('A revoked key cannot be rotated.')
  })
})
