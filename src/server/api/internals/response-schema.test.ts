/**
 * responseSchema(): outside production a procedure's response is parsed
 * against its schema; in production the same schema documents the endpoint
 * but the response is not parsed again.
 */
import { initTRPC } from '@trpc/server'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { transfer, transferPage } from '@/server/api/v1/transfers/transfer.schema'
import { toApiError } from '@/server/errors/to-api-error'
import { responseSchema } from './response-schema'

const t = initTRPC.create()

const offContract = { data: [{ collection_address: 'NOT AN ADDRESS' }], pagination: null, coverage: 1 }
// A page around the documented Transfer example (the schema's own OpenAPI example).
const validPage = {
  data: [transfer.meta()?.example as Record<string, unknown>],
  pagination: { limit: 20, has_more: false },
  coverage: { status: 'complete', start_block: '0' },
}

describe('responseSchema', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
    vi.resetModules()
  })

  it('parses responses outside production: off-contract, or changed by the parse, is refused', () => {
    const schema = responseSchema(transferPage, true)
    expect(responseSchema(transferPage, true)).toBe(schema)
    expect(() => schema.parse(offContract)).toThrow()
    expect(schema.parse(validPage)).toEqual(validPage)
    // A key the parse would strip never reaches a client unnoticed: production does not parse.
    const withInternalKey = { ...validPage, data: [{ ...validPage.data[0], block_us: '1' }] }
    expect(transferPage.parse(withInternalKey)).toEqual(validPage)
    expect(() => schema.parse(withInternalKey)).toThrow(/parsing it would change it/)
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
      const { responseSchema: fresh } = await import('./response-schema')
      const router = t.router({
        page: t.procedure.output(fresh(transferPage)).query(() => offContract as never),
      })
      const call = t.createCallerFactory(router)({}).page()
      if (passes) await expect(call).resolves.toBe(offContract)
      else await expect(call).rejects.toThrow(/Output validation failed/)
    }
  })
  it('refuses, call after call, a procedure response the parse would change (outside production)', async () => {
    vi.resetModules()
    vi.stubEnv('NODE_ENV', 'test')
    const { responseSchema: fresh } = await import('./response-schema')
    const withInternalKey = { ...validPage, internal: true }
    const router = t.router({
      page: t.procedure.output(fresh(transferPage)).query(() => withInternalKey as never),
    })
    const caller = t.createCallerFactory(router)({})
    // tRPC falls back to parseAsync after a parse error without zod issues; the second call proves it did not.
    for (let i = 0; i < 2; i++) await expect(caller.page()).rejects.toThrow(/Output validation failed/)
  })

  it("answers a refused response as the server's fault: a 500, never a client's 400", async () => {
    vi.resetModules()
    vi.stubEnv('NODE_ENV', 'test')
    const { responseSchema: fresh } = await import('./response-schema')
    for (const response of [offContract, { ...validPage, internal: true }]) {
      const router = t.router({
        page: t.procedure.output(fresh(transferPage)).query(() => response as never),
      })
      const error = await t
        .createCallerFactory(router)({})
        .page()
        .then(
          () => undefined,
          (err: unknown) => toApiError(err),
        )
      expect(error).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' })
    }
  })
})
