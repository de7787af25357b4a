/**
 * The status endpoint's honest view of the chain connection, from what the
 * indexer records in indexer_state (rpc_endpoints, head_observed_at): ok,
 * degraded, behind, unreachable, unknown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '@/config/env'
import { clearIndexerSnapshot } from '@/server/api/read/indexer-snapshot'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { getIndexerStatus } from './status.handler'

let db: TestDatabase
const config = parseConfig({ NODE_ENV: 'test' })

beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query(
    `INSERT INTO indexer_state (network, chain_id, start_block, coverage_start_block, last_seen_block,
                                last_indexed_block, last_confirmed_block, last_verified_block, coverage_status,
                                verification_mismatches, verification_repairs)
     VALUES ('devnet', 31337, 0, 0, 120, 120, 118, 118, 'complete', 3, 1)`,
  )
})

afterAll(async () => {
  await db?.drop()
})

async function statusWith(headAgeSeconds: number | null, states: string[]) {
  await db.pool.query(
    `UPDATE indexer_state SET head_observed_at = CASE WHEN $1::int IS NULL THEN NULL ELSE now() - make_interval(secs => $1::int) END,
            rpc_endpoints = $2::jsonb`,
    [headAgeSeconds, JSON.stringify(states.map((state, i) => ({ endpoint: i + 1, state, head: '120' })))],
  )
  clearIndexerSnapshot(db.pool)
  return getIndexerStatus({ config, db: { pool: db.pool } } as never, {})
}

describe('indexer status: the chain connection', () => {
  it('shows verification progress and counters', async () => {
    const status = await statusWith(1, ['ok'])
    expect(status).toMatchObject({
      last_confirmed_block: '118',
      last_verified_block: '118',
      verification_mismatches: '3',
      verification_repairs: '1',
      head_age_seconds: 1,
      rpc_status: 'ok',
      rpc_endpoints: [{ endpoint: 1, state: 'ok', head: '120' }],
    })
  })

  it('says how the verified blocks were verified, leaving out what it cannot read', async () => {
    await db.pool.query(
      `UPDATE indexer_state SET log_index_untrusted = true, verification_spans = $1::jsonb`,
      [
        JSON.stringify([
          { from: '0', to: '99', method: 'sampled_proof', sample_rate: 0.01 },
          { from: '100', to: '118', method: 'receipts_proof', sample_rate: null },
          { from: '119', to: '120', method: 'made_up', sample_rate: null },
        ]),
      ],
    )
    const status = await statusWith(1, ['ok'])
    await db.pool.query(`UPDATE indexer_state SET log_index_untrusted = false, verification_spans = '[]'`)
    expect(status.log_index_untrusted).toBe(true)
    expect(status.verified_by).toEqual([
      { from_block: '0', to_block: '99', method: 'sampled_proof', proof_sample_rate: 0.01 },
      { from_block: '100', to_block: '118', method: 'receipts_proof', proof_sample_rate: null },
    ])
  })

  it.each([
    [1, ['ok', 'failing'], 'degraded'],
    [1, ['ok', 'rate_limited'], 'degraded'],
    [1, ['lagging', 'syncing'], 'behind'],
    [31, ['ok', 'ok'], 'unreachable'],
    [45, ['failing', 'failing'], 'unreachable'],
    [null, [], 'unknown'],
  ] as const)('head %s s old with endpoints %j: %s', async (age, states, expected) => {
    const status = await statusWith(age, [...states])
    expect(status.rpc_status).toBe(expected)
    expect(status.head_age_seconds).toBe(age)
  })
})

describe('indexer status: the metadata queue', () => {
  it('is null / empty before the queue reports', async () => {
    await db.pool.query('UPDATE indexer_state SET metadata_queue = NULL')
    const status = await statusWith(1, ['ok'])
    expect(status.metadata_backlog).toBeNull()
    expect(status.metadata_hosts_backed_off).toEqual([])
  })

  it('shows the backlog by outcome and the backed-off hosts', async () => {
    const until = new Date(Date.now() + 60_000).toISOString()
    await db.pool.query('UPDATE indexer_state SET metadata_queue = $1::jsonb', [
      JSON.stringify({
        backlog: { pending: 12, timeout: 40, http_error: 3 },
        backed_off_hosts: [
          { host: 'slow.example:443', state: 'open', until, outcome: 'timeout' },
          { host: 'ipfs-gateway-1', state: 'half_open', until, outcome: 'http_error' },
        ],
        in_flight: 5,
      }),
    ])
    const status = await statusWith(1, ['ok'])
    expect(status.metadata_backlog).toEqual({ pending: 12, timeout: 40, http_error: 3 })
    expect(status.metadata_hosts_backed_off).toEqual([
      { host: 'slow.example:443', state: 'open', until, outcome: 'timeout' },
      { host: 'ipfs-gateway-1', state: 'half_open', until, outcome: 'http_error' },
    ])
  })
})
