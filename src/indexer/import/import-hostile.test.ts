/**
 * The historical import against files that lie or break (docs/indexer.md, "Historical
 * import"): timestamps PostgreSQL cannot store or that do not exist, rows dated after the
 * indexed chain (they would take over its current owners), rows that conflict with stored
 * ones, repeated CSV columns, ERC-1155 amounts, JSON numbers that are not exact. Each is a
 * rejected line with its reason; the valid lines around it are imported.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { writeTransfers } from '../store'
import { importTransfersFile } from './import'

let db: TestDatabase
const dir = mkdtempSync(path.join(os.tmpdir(), 'import-hostile-'))
const ZERO = '0x0000000000000000000000000000000000000000'
const ALICE = '0x00000000000000000000000000000000000000a1'
const BOB = '0x00000000000000000000000000000000000000b2'
const CAROL = '0x00000000000000000000000000000000000000c3'
const DAVE = '0x00000000000000000000000000000000000000d4'
const coll = (n: number) => `0x${n.toString(16).padStart(40, '0')}`
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`
const HEADER =
  'collection_address,token_id,from_address,to_address,block_number,block_timestamp,transaction_hash,log_index'

/** A transfer as the indexer stores one (source 'rpc'), at block `block` on `date`. */
const indexed = (
  collection: string,
  tokenId: bigint,
  from: string,
  to: string,
  block: number,
  date: string,
  hash: number,
  amount?: bigint,
) => ({
  collection,
  tokenId,
  from,
  to,
  blockNumber: block,
  blockTimestamp: new Date(date),
  transactionHash: tx(hash),
  logIndex: 0,
  ...(amount === undefined ? {} : { amount }),
})

function file(name: string, lines: string[]): string {
  const p = path.join(dir, name)
  writeFileSync(p, lines.join('\n'))
  return p
}

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

describe('the historical import and hostile files', () => {
  it('a block_timestamp PostgreSQL cannot store is a rejected line, not an aborted import', async () => {
    const C = coll(0xa001)
    const p = file('bad-ts.csv', [
      HEADER,
      `${C},1,${ZERO},${ALICE},10,2020-01-01T00:00:00Z,${tx(0xa0010)},0`,
      `${C},2,${ZERO},${ALICE},11,253402300800,${tx(0xa0011)},0`, // Unix seconds: year 10000
      `${C},3,${ZERO},${ALICE},12,0000-01-01T00:00:00Z,${tx(0xa0012)},0`, // RFC 3339 year 0
    ])
    const report = await importTransfersFile(db.pool, p, { startBlock: 1000n }).catch((err: Error) => err)
    expect(report).not.toBeInstanceOf(Error)
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM transfers WHERE collection_address = $1',
      [C],
    )
    expect(rows[0].n).toBe(1) // the valid line 2 must be imported
  })

  it('the CLI names the line of an out-of-range timestamp and exits 1 (not 2)', { timeout: 60_000 }, () => {
    const C = coll(0xa002)
    const p = file('bad-ts-cli.csv', [HEADER, `${C},2,${ZERO},${ALICE},11,253402300800,${tx(0xa0021)},0`])
    const result = spawnSync(path.resolve('node_modules/.bin/tsx'), ['src/indexer/import/cli.ts', '--', p], {
      env: { ...process.env, DATABASE_URL: db.url, START_BLOCK: '1000' },
      encoding: 'utf8',
    })
    expect({ status: result.status, stderr: result.stderr }).toMatchObject({
      status: 1,
      stderr: expect.stringContaining('line 2:'),
    })
  })

  it('the Unix epoch itself is rejected: a feed cursor (before_timestamp, at least 1) could not page past it', async () => {
    const C = coll(0xa005)
    const p = file('epoch.csv', [
      HEADER,
      `${C},1,${ZERO},${ALICE},10,0,${tx(0xa0050)},0`,
      `${C},2,${ZERO},${ALICE},11,1970-01-01T00:00:00Z,${tx(0xa0051)},0`,
      `${C},3,${ZERO},${ALICE},12,1,${tx(0xa0052)},0`,
    ])
    const report = await importTransfersFile(db.pool, p, { startBlock: 1000n })
    expect(report.rejected).toEqual([
      { line: 2, reason: 'block_timestamp must lie after 1970-01-01T00:00:00Z and not after now' },
      { line: 3, reason: 'block_timestamp must lie after 1970-01-01T00:00:00Z and not after now' },
    ])
    const { rows } = await db.pool.query(
      'SELECT token_id::text AS t FROM transfers WHERE collection_address = $1',
      [C],
    )
    expect(rows).toEqual([{ t: '3' }])
  })

  it('an impossible calendar date is rejected, not shifted to another day', async () => {
    const C = coll(0xa003)
    const p = file('feb30.csv', [HEADER, `${C},1,${ZERO},${ALICE},10,2021-02-30T00:00:00Z,${tx(0xa0031)},0`])
    const report = await importTransfersFile(db.pool, p, { startBlock: 1000n })
    const { rows } = await db.pool.query(
      `SELECT to_char(block_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS d FROM transfers WHERE collection_address = $1`,
      [C],
    )
    expect({ rejected: report.rejected.length, stored: rows }).toEqual({ rejected: 1, stored: [] })
  })

  it('an imported row (block < START_BLOCK) never changes the current owner the indexed chain set', async () => {
    const C = coll(0xa004)
    // Indexed: token 9 moved BOB -> CAROL at block 1500 (2021-06-01).
    await writeTransfers(db.pool, [
      indexed(C, 9n, ZERO, BOB, 1400, '2021-05-01T00:00:00Z', 0xa0040),
      indexed(C, 9n, BOB, CAROL, 1500, '2021-06-01T00:00:00Z', 0xa0041),
    ])
    // Imported: block 100 (before START_BLOCK 1000) but with a timestamp after the indexed blocks.
    const p = file('late-ts.csv', [
      HEADER,
      `${C},9,${ALICE},${DAVE},100,2022-01-01T00:00:00Z,${tx(0xa0042)},0`,
    ])
    const report = await importTransfersFile(db.pool, p, { startBlock: 1000n })
    const { rows } = await db.pool.query('SELECT current_owner FROM tokens WHERE collection_address = $1', [
      C,
    ])
    expect({ inserted: report.inserted, owner: rows[0].current_owner }).toMatchObject({ owner: CAROL })
  })

  it('a row conflicting with another (same tx/log_index, different content) is reported, not "already present"', async () => {
    const C = coll(0xa005)
    await writeTransfers(db.pool, [indexed(C, 1n, ZERO, BOB, 1500, '2021-06-01T00:00:00Z', 0xa0050)])
    const p = file('conflict.csv', [
      HEADER,
      // same identity as the indexed row, different block/token/owner
      `${C},2,${ZERO},${ALICE},10,2020-01-01T00:00:00Z,${tx(0xa0050)},0`,
      // the same event twice in one file with different content
      `${C},3,${ZERO},${ALICE},11,2020-01-02T00:00:00Z,${tx(0xa0051)},0`,
      `${C},4,${ZERO},${CAROL},11,2020-01-02T00:00:00Z,${tx(0xa0051)},0`,
    ])
    const report = await importTransfersFile(db.pool, p, { startBlock: 1000n })
    expect(report).toMatchObject({ inserted: 1, duplicates: 0 })
    expect(report.rejected.map((r) => r.line).sort()).toEqual([2, 4])
  })

  it('a CSV header naming a column twice is refused, not resolved silently to the last one', async () => {
    const C = coll(0xa006)
    const p = file('dup-col.csv', [
      `${HEADER},token_id`,
      `${C},1,${ZERO},${ALICE},10,2020-01-01T00:00:00Z,${tx(0xa0061)},0,2`,
    ])
    const outcome = await importTransfersFile(db.pool, p, { startBlock: 1000n }).catch((e: Error) => e)
    const { rows } = await db.pool.query(
      'SELECT token_id::text FROM transfers WHERE collection_address = $1',
      [C],
    )
    expect({ threw: outcome instanceof Error, rows }).toEqual({ threw: true, rows: [] })
  })

  it('an ERC-1155 amount is not silently dropped (counted as 1) for a token indexed as ERC-1155', async () => {
    const C = coll(0xa007)
    await writeTransfers(db.pool, [indexed(C, 5n, ZERO, ALICE, 1500, '2021-06-01T00:00:00Z', 0xa0070, 10n)])
    const p = file('erc1155.jsonl', [
      JSON.stringify({
        collection_address: C,
        token_id: '5',
        from_address: ZERO,
        to_address: BOB,
        block_number: 100,
        block_timestamp: '2020-01-01T00:00:00Z',
        transaction_hash: tx(0xa0071),
        log_index: 0,
        amount: '7',
      }),
    ])
    const report = await importTransfersFile(db.pool, p, { startBlock: 1000n })
    const { rows } = await db.pool.query(
      'SELECT balance::text FROM token_balances WHERE collection_address = $1 AND owner = $2',
      [C, BOB],
    )
    // Either the row is refused (imports are ERC-721 only) or BOB holds the 7 units it moved.
    const ok = report.rejected.length === 1 ? rows.length === 0 : rows[0]?.balance === '7'
    expect({ rejected: report.rejected, bobBalance: rows[0]?.balance, ok }).toMatchObject({ ok: true })
  })

  it('a JSON number too large to be exact is rejected with that reason, not "missing"', async () => {
    const C = coll(0xa008)
    const p = file('bignum.jsonl', [
      `{"collection_address":"${C}","token_id":12345678901234567890,"from_address":"${ZERO}","to_address":"${ALICE}","block_number":10,"block_timestamp":"2020-01-01T00:00:00Z","transaction_hash":"${tx(0xa0081)}","log_index":0}`,
    ])
    const report = await importTransfersFile(db.pool, p, { startBlock: 1000n })
    expect(report.rejected).toHaveLength(1)
    expect(report.rejected[0]!.reason).not.toBe('token_id is missing')
  })
})
