import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { writeTransfers } from '../store'
import { importTransfersFile } from './import'

let db: TestDatabase
const dir = mkdtempSync(path.join(os.tmpdir(), 'import-test-'))
const COLL = '0x00000000000000000000000000000000000000c1'
const ALICE = '0x00000000000000000000000000000000000000a1'
const BOB = '0x00000000000000000000000000000000000000b2'
const CAROL = '0x00000000000000000000000000000000000000c3'
const ZERO = '0x0000000000000000000000000000000000000000'
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`
const MAX = (2n ** 256n - 1n).toString()

const csv = [
  'collection_address,token_id,from_address,to_address,block_number,block_timestamp,transaction_hash,log_index',
  `${COLL},1,${ZERO},${ALICE},10,2020-01-01T00:00:00Z,${tx(1)},0`,
  `${COLL},1,${ALICE},${BOB},20,2020-01-02T00:00:00Z,${tx(2)},3`,
  `${COLL},${MAX},${ZERO},${ALICE},0,1577836800,${tx(3)},1`,
  `${COLL},2,${ZERO},${BOB},30,2020-01-03T00:00:00Z,${tx(4)},0`,
  `${COLL},2,${BOB},${ZERO},31,2020-01-03T00:00:12Z,${tx(5)},0`,
  `0xnot-an-address,1,${ZERO},${ALICE},10,2020-01-01T00:00:00Z,${tx(6)},0`,
  `${COLL},${2n ** 256n},${ZERO},${ALICE},10,2020-01-01T00:00:00Z,${tx(7)},0`,
  `${COLL},3,${ZERO},${ALICE},5000,2020-01-01T00:00:00Z,${tx(8)},0`,
  `${COLL},3,${ZERO},${ALICE},10,yesterday,${tx(9)},0`,
  `${COLL},3,${ZERO},${ALICE},10,2020-01-01T00:00:00Z,0x1234,0`,
  `${COLL},3,${ZERO}`,
  '',
  `"${COLL}","4","${ZERO}","${CAROL}","40","2020-01-04T00:00:00Z","${tx(10)}","2"`,
].join('\n')

beforeAll(async () => {
  db = await createTestDatabase()
  writeFileSync(path.join(dir, 'history.csv'), csv)
}, 60_000)

afterAll(async () => {
  await db?.drop()
})

describe('import of historical transfers', () => {
  it('imports valid rows, reports rejected lines with reasons, and updates derived state', async () => {
    const report = await importTransfersFile(db.pool, path.join(dir, 'history.csv'), { startBlock: 1000n })
    expect(report.rejected).toEqual([
      { line: 7, reason: 'collection_address must be 0x and 40 hex digits' },
      { line: 8, reason: 'token_id must be a decimal integer from 0 to 2^256-1' },
      { line: 9, reason: 'block_number 5000 is not before START_BLOCK 1000 (use 0 when unknown)' },
      { line: 10, reason: 'block_timestamp must be RFC 3339 (2021-03-04T05:06:07Z) or Unix seconds' },
      { line: 11, reason: 'transaction_hash must be 0x and 64 hex digits' },
      { line: 12, reason: 'expected 8 fields, found 3' },
    ])
    expect([report.inserted, report.duplicates]).toEqual([6, 0])
    const tokens = await db.pool.query(
      'SELECT token_id::text, current_owner, is_burned, transfer_count FROM tokens ORDER BY tokens.token_id',
    )
    expect(tokens.rows).toEqual([
      { token_id: '1', current_owner: BOB, is_burned: false, transfer_count: 2 },
      { token_id: '2', current_owner: ZERO, is_burned: true, transfer_count: 2 },
      { token_id: '4', current_owner: CAROL, is_burned: false, transfer_count: 1 },
      { token_id: MAX, current_owner: ALICE, is_burned: false, transfer_count: 1 },
    ])
    const collection = await db.pool.query(
      'SELECT total_supply::int, unique_holders::int, total_transfers::int FROM collections WHERE address = $1',
      [COLL],
    )
    expect(collection.rows).toEqual([{ total_supply: 3, unique_holders: 3, total_transfers: 6 }])
    const unknown = await db.pool.query(
      'SELECT block_number::int, source FROM transfers WHERE transaction_hash = $1',
      [tx(3)],
    )
    expect(unknown.rows).toEqual([{ block_number: 0, source: 'import' }])
  })

  it('is idempotent: importing the same file again inserts nothing', async () => {
    const report = await importTransfersFile(db.pool, path.join(dir, 'history.csv'), { startBlock: 1000n })
    expect([report.inserted, report.duplicates, report.rejected.length]).toEqual([0, 6, 6])
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM transfers')
    expect(rows[0].n).toBe(6)
  })

  it('lands older history under newer indexed rows without changing the current owner', async () => {
    // The indexer already saw token 9 move at block 1500; the import adds its mint from block 100.
    await writeTransfers(db.pool, [
      {
        collection: COLL,
        tokenId: 9n,
        from: BOB,
        to: CAROL,
        blockNumber: 1500,
        blockTimestamp: new Date('2021-06-01T00:00:00Z'),
        transactionHash: tx(20),
        logIndex: 0,
      },
    ])
    const lines = [
      JSON.stringify({
        collection_address: COLL,
        token_id: '9',
        from_address: ZERO,
        to_address: BOB,
        block_number: 100,
        block_timestamp: '2020-02-01T00:00:00Z',
        transaction_hash: tx(21),
        log_index: 4,
      }),
      '{"broken json',
      JSON.stringify({
        collection_address: COLL,
        token_id: 9,
        from_address: ZERO,
        to_address: BOB,
        block_number: 100,
        block_timestamp: 1580515200,
        transaction_hash: tx(21),
        log_index: 4,
      }),
    ]
    writeFileSync(path.join(dir, 'older.jsonl'), lines.join('\n'))
    const report = await importTransfersFile(db.pool, path.join(dir, 'older.jsonl'), { startBlock: 1000n })
    expect(report).toMatchObject({
      inserted: 1,
      duplicates: 1,
      rejected: [{ line: 2, reason: 'not valid JSON' }],
    })
    const { rows } = await db.pool.query(
      'SELECT current_owner, transfer_count, minted_block::int FROM tokens WHERE token_id = 9',
    )
    expect(rows).toEqual([{ current_owner: CAROL, transfer_count: 2, minted_block: 100 }])
  })

  it('the CLI prints one line per rejected row and exits 1 when some were rejected', {
    timeout: 60_000,
  }, () => {
    const result = spawnSync(
      path.resolve('node_modules/.bin/tsx'),
      ['src/indexer/import/cli.ts', '--', path.join(dir, 'history.csv')],
      { env: { ...process.env, DATABASE_URL: db.url, START_BLOCK: '1000' }, encoding: 'utf8' },
    )
    expect(result.status).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(6)
    expect(result.stderr).toContain('line 9: block_number 5000 is not before START_BLOCK 1000')
    expect(result.stdout).toContain('0 transfers imported, 6 already present, 6 lines rejected')
  })
})
