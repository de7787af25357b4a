import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EmbeddedPostgres, startEmbeddedPostgres } from '@/dev/postgres'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { copyBool, copyNumber, copyOrInsert, copyRows, copyText, copyTimestamp } from './pg-copy'

let db: TestDatabase
let embedded: EmbeddedPostgres
const embeddedDir = mkdtempSync(path.join(os.tmpdir(), 'pg-copy-test-'))

beforeAll(async () => {
  db = await createTestDatabase()
  embedded = await startEmbeddedPostgres({ dataDir: embeddedDir })
}, 60_000)
afterAll(async () => {
  await db?.drop()
  await embedded?.stop()
  rmSync(embeddedDir, { recursive: true, force: true })
})

const TABLE = 'CREATE TEMP TABLE copied (t text, n numeric, b bool, ts timestamptz, i bigint)'
const COPY = 'COPY copied (t, n, b, ts, i) FROM STDIN'

/** Runs `fn` in a transaction on a fresh temporary table, then returns the table's rows as text. */
async function withTable(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<void>) {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query(TABLE)
    await fn(client)
    const { rows } = await client.query(
      "SELECT t, n::text, b, to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS ts, i::text FROM copied ORDER BY copied.n",
    )
    return rows
  } finally {
    await client.query('ROLLBACK')
    client.release()
  }
}

describe('COPY text lines', () => {
  it('carry any string, null, number, boolean and timestamp as the server reads them back', async () => {
    const strings = fc.sample(
      fc.oneof(fc.string(), fc.constantFrom('\\N', 'a\tb', 'x\ny\r\n', '\\', '\\t')),
      200,
    )
    const lines = strings.map(
      (t, n) =>
        `${copyText(t)}\t${n}\t${copyBool(n % 2 === 0)}\t${copyTimestamp(1_700_000_000n + BigInt(n))}\t\\N\n`,
    )
    const rows = await withTable(db.pool, (client) => copyRows(client, COPY, lines))
    expect(rows.map((r) => r.t)).toEqual(strings)
    expect(rows[1]).toMatchObject({ n: '1', b: false, ts: '2023-11-14 22:13:21', i: null })
    expect(rows[0]!.b).toBe(true)
  })

  it('arrive whole across message boundaries, multi-byte characters and a line longer than a message included', async () => {
    // Some 3 MiB of lines, so that lines fall across the 1 MiB messages; one line alone is 1.5 MiB.
    const texts = Array.from({ length: 6_000 }, (_, n) => `${'é€🙂'.repeat(n % 40)}#${n}`.padEnd(500, 'x'))
    texts[3_000] = `€${'y'.repeat(1_500_000)}`
    const lines = texts.map((t, n) => `${copyText(t)}\t${n}\tt\t${copyTimestamp(0n)}\t${n}\n`)
    const rows = await withTable(db.pool, (client) => copyRows(client, COPY, lines))
    expect(rows.length).toBe(texts.length)
    expect(rows.map((r) => r.t)).toEqual(texts)
  })

  it('write null and 2^256 − 1 as numbers', async () => {
    const big = 2n ** 256n - 1n
    const rows = await withTable(db.pool, (client) =>
      copyRows(client, COPY, [`a\t${copyNumber(big)}\tt\t${copyTimestamp(0n)}\t${copyNumber(null)}\n`]),
    )
    expect(rows).toEqual([{ t: 'a', n: big.toString(), b: true, ts: '1970-01-01 00:00:00', i: null }])
  })
})

describe('copyOrInsert', () => {
  const insert = (client: pg.PoolClient) => () =>
    client.query("INSERT INTO copied VALUES ('inserted', 1, true, now(), 1)").then(() => undefined)
  const copy = (client: pg.PoolClient) => () =>
    copyRows(client, COPY, [`copied\t1\tt\t${copyTimestamp(0n)}\t1\n`])

  it('copies where the server takes COPY', async () => {
    const rows = await withTable(db.pool, (client) => copyOrInsert(client, copy(client), insert(client)))
    expect(rows.map((r) => r.t)).toEqual(['copied'])
  })

  it('inserts instead on the embedded database, which refuses COPY, and keeps the transaction usable', async () => {
    const pool = new pg.Pool({ connectionString: embedded.url, max: 1 })
    try {
      const rows = await withTable(pool, async (client) => {
        await client.query("INSERT INTO copied VALUES ('before', 0, true, now(), 0)")
        await copyOrInsert(client, copy(client), insert(client))
        // Known now: the second write goes straight to its INSERT.
        const copyAgain = () => Promise.reject(new Error('COPY tried again'))
        await copyOrInsert(client, copyAgain, () =>
          client.query("INSERT INTO copied VALUES ('again', 2, true, now(), 2)").then(() => undefined),
        )
      })
      expect(rows.map((r) => r.t)).toEqual(['before', 'inserted', 'again'])
    } finally {
      await pool.end()
    }
  })

  it('passes on any other error of the COPY, a unique violation among them', async () => {
    const client = await db.pool.connect()
    try {
      await client.query('BEGIN')
      await client.query('CREATE TEMP TABLE keyed (k int PRIMARY KEY)')
      const copyKeys = () => copyRows(client, 'COPY keyed (k) FROM STDIN', ['1\n', '1\n'])
      await expect(copyOrInsert(client, copyKeys, async () => undefined)).rejects.toMatchObject({
        code: '23505',
      })
      await client.query('ROLLBACK')
    } finally {
      client.release()
    }
  })
})
