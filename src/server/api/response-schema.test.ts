/**
 * responseSchema(): outside production a procedure's response is parsed
 * against its schema; in production the same schema documents the endpoint
 * but the response is not parsed again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { transferPage } from '@/server/api/routers/transfers/transfer.schema'
import { responseSchema } from '@/server/api/trpc'

const offContract = { data: [{ collection_address: 'NOT AN ADDRESS' }], pagination: null, coverage: 1 }

describe('responseSchema', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
    vi.resetModules()
  })

  it('parses responses outside production: an off-contract response is refused', () => {
    const schema = responseSchema(transferPage, true)
    expect(schema).toBe(transferPage)
    expect(() => schema.parse(offContract)).toThrow()
  })

  it('in production returns one unchecked copy per schema that passes the response through', () => {
    const unchecked = responseSchema(transferPage, false)
    expect(unchecked).not.toBe(transferPage)
    expect(responseSchema(transferPage, false)).toBe(unchecked)
    expect(unchecked.parse(offContract)).toBe(offContract)
    // The original is untouched.
    expect(() => transferPage.parse(offContract)).toThrow()
  })

  it('documents every endpoint identically in production and elsewhere', async () => {
    const config = { PUBLIC_URL: 'http://localhost:3000', NETWORK: 'devnet' }
    vi.resetModules()
    const checked = (await import('@/server/rest/openapi')).openApiDocument(config)
    vi.resetModules()
    vi.stubEnv('NODE_ENV', 'production')
    const unchecked = (await import('@/server/rest/openapi')).openApiDocument(config)
    expect(JSON.stringify(unchecked)).toBe(JSON.stringify(checked))
    // Shared page schemas stay named components (not inlined copies).
    expect(Object.keys(unchecked.components?.schemas ?? {})).toContain('TransferPage')
  })

  it('lets an off-contract response through a production procedure, and refuses it elsewhere', async () => {
    for (const [env, passes] of [
      ['production', true],
      ['test', false],
    ] as const) {
      vi.resetModules()
      vi.stubEnv('NODE_ENV', env)
      const trpc = await import('@/server/api/trpc')
      const router = trpc.createRouter({
        page: trpc.publicProcedure
          .output(trpc.responseSchema(transferPage))
          .query(() => offContract as never),
      })
      const call = trpc
        .createCallerFactory(router)({} as never)
        .page()
      if (passes) await expect(call).resolves.toBe(offContract)
      else await expect(call).rejects.toThrow(/Output validation failed/)
    }
  })
})
