/**
 * The parts of the read replicas that need no replica: which failures a read
 * retries on the primary, and a configuration without replicas. The replicas
 * themselves are tested on a real streaming replica in
 * src/server/rest/read-replicas.test.ts.
 */
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import type { Database } from './database'
import { isReplicaFailure, openReadReplicas } from './read-replicas'

/** An error as the REST layer sees it: the pg error under a wrapper. */
function wrapped(fields: { code?: string; message?: string }) {
  const pgError = Object.assign(
    new Error(fields.message ?? 'failed'),
    fields.code ? { code: fields.code } : {},
  )
  return new Error('procedure failed', { cause: pgError })
}

describe('isReplicaFailure', () => {
  it.each([
    ['a refused connection', { code: 'ECONNREFUSED' }],
    ['a cut connection', { message: 'Connection terminated unexpectedly' }],
    ['no connection in time', { message: 'timeout exceeded when trying to connect' }],
    ['a server shutting down', { code: '57P01' }],
    [
      'a conflict with WAL replay',
      { code: '40001', message: 'canceling statement due to conflict with recovery' },
    ],
    ['a buffer-pin deadlock with replay', { code: '40P01' }],
  ])('retries on the primary after %s', (_, fields) => {
    expect(isReplicaFailure(wrapped(fields))).toBe(true)
  })

  it.each([
    ['a bad query', { code: '42601' }],
    ['a statement past its time limit (the primary would be as slow)', { code: '57014' }],
    ['anything else', { message: 'boom' }],
  ])('does not retry %s', (_, fields) => {
    expect(isReplicaFailure(wrapped(fields))).toBe(false)
  })
})

describe('openReadReplicas without DATABASE_READ_URL', () => {
  it('sends every read to the primary and probes nothing', async () => {
    const primary = { close: async () => {} } as unknown as Database
    const reads = openReadReplicas(
      {
        DATABASE_URL: 'postgres://u@db.invalid:5432/nft',
        DATABASE_READ_URL: undefined,
        DATABASE_READ_MAX_LAG_S: 5,
        DB_POOL_SIZE: 10,
        DB_STATEMENT_TIMEOUT_MS: 5000,
      },
      primary,
      pino({ level: 'silent' }),
    )
    expect(reads.pick()).toBe(primary)
    expect(reads.pick()).toBe(primary)
    expect(reads.status()).toEqual([])
    expect(reads.isReplica(primary)).toBe(false)
    await reads.close()
  })
})
