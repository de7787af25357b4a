import type pg from 'pg'
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { emptyResult, type TokenJob, type TokenResult } from './token-job'
import { writeOutcomes } from './token-outcomes'

const job = (id: string): TokenJob => ({
  id,
  collection: '0xabc',
  tokenId: BigInt(id),
  attempts: 0,
  nextAttemptAt: 'x',
  recheck: false,
  media: null,
})
const ok = (doc: Record<string, unknown>): TokenResult => ({
  ...emptyResult(),
  uri: 'https://example.com/1',
  metadata: doc,
  normalized: {
    description: null,
    attributes: null,
    animationUrl: null,
    externalUrl: null,
    backgroundColor: null,
  },
})

/** A pool whose UPDATE refuses any batch holding the marker, as PostgreSQL refuses a value (22P02). */
function refusingPool(error: { code: string }) {
  const writes: Array<{ ids: string[]; outcomes: string[]; documents: Array<string | null> }> = []
  const pool = {
    async query(sql: string, params: unknown[]) {
      if (!sql.includes('UPDATE tokens')) return { rows: [] }
      const documents = params[3] as Array<string | null>
      if (documents.some((d) => d?.includes('refuse me'))) throw Object.assign(new Error('refused'), error)
      writes.push({ ids: params[0] as string[], outcomes: params[1] as string[], documents })
      return { rows: [] }
    },
  } as unknown as pg.Pool
  return { pool, writes }
}

describe('writeOutcomes', () => {
  it('writes a batch the database refuses token by token; the refused one as invalid_json without its document', async () => {
    const { pool, writes } = refusingPool({ code: '22P02' })
    await writeOutcomes(pool, pino({ level: 'silent' }), [
      [job('1'), ok({ name: 'fine' })],
      [job('2'), ok({ name: 'refuse me' })],
      [job('3'), ok({ name: 'also fine' })],
    ])
    expect(writes).toEqual([
      { ids: ['1'], outcomes: ['ok'], documents: ['{"name":"fine"}'] },
      { ids: ['2'], outcomes: ['invalid_json'], documents: [null] },
      { ids: ['3'], outcomes: ['ok'], documents: ['{"name":"also fine"}'] },
    ])
  })

  it('lets any other failure through (the database is down: the tokens stay due)', async () => {
    const { pool, writes } = refusingPool({ code: '08006' })
    await expect(
      writeOutcomes(pool, pino({ level: 'silent' }), [[job('2'), ok({ name: 'refuse me' })]]),
    ).rejects.toThrow('refused')
    expect(writes).toEqual([])
  })
})
