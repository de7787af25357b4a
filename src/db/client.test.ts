/**
 * Clients bound to a schema by URL or option, Prisma through the pg driver
 * adapter, and isDatabaseUnavailable() on real failures (not constructed
 * error objects), against the run's server.
 */
import { spawnSync } from 'node:child_process'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPool, createPrisma, isDatabaseUnavailable, schemaFromUrl, urlWithSchema } from '@/db/client'
import { Prisma } from '@/db/generated/client'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'

const MAX_UINT256 = (2n ** 256n - 1n).toString()
/** Nothing listens on port 1 of loopback: connecting there is refused at once. */
const UNREACHABLE_URL = 'postgres://postgres@127.0.0.1:1/postgres'

describe('clients bound to a test schema', () => {
  let db: TestDatabase
  let other: TestDatabase

  beforeAll(async () => {
    ;[db, other] = await Promise.all([createTestDatabase(), createTestDatabase()])
  })
  afterAll(async () => {
    await Promise.all([db?.drop(), other?.drop()])
  })

  it('carry the schema in the URL, for anything given only the URL', async () => {
    expect(schemaFromUrl(db.url)).toBe(db.schema)
    expect(db.url).toContain(`options=-c%20search_path%3D${db.schema}%2Cpublic`)
    const { rows } = await db.pool.query(
      "SELECT current_schema() AS schema, replace(current_setting('search_path'), ' ', '') AS path",
    )
    expect(rows).toEqual([{ schema: db.schema, path: `${db.schema},public` }])

    // A plain pg client and a separate process land in the same schema.
    const plain = new pg.Client({ connectionString: db.url })
    await plain.connect()
    expect((await plain.query('SELECT current_schema() AS s')).rows).toEqual([{ s: db.schema }])
    await plain.end()
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import pg from 'pg'; const c = new pg.Client({ connectionString: process.env.URL }); await c.connect(); " +
          "const r = await c.query('SELECT count(*)::int AS n FROM _prisma_migrations'); console.log(r.rows[0].n); await c.end()",
      ],
      { env: { ...process.env, URL: db.url }, encoding: 'utf8', timeout: 30_000 },
    )
    expect(child.stderr).toBe('')
    expect(Number(child.stdout.trim())).toBeGreaterThan(0)
  })

  it("understand Prisma's ?schema= and let options.schema win", async () => {
    const base = db.url.slice(0, db.url.indexOf('?'))
    const viaPrismaParam = createPool(`${base}?schema=${db.schema}`, { max: 1 })
    const overridden = createPool(db.url, { schema: other.schema, max: 1 })
    try {
      expect((await viaPrismaParam.query('SELECT current_schema() AS s')).rows).toEqual([{ s: db.schema }])
      expect((await overridden.query('SELECT current_schema() AS s')).rows).toEqual([{ s: other.schema }])
    } finally {
      await Promise.all([viaPrismaParam.end(), overridden.end()])
    }
  })

  it('set statement_timeout and application_name on every connection', async () => {
    const pool = createPool(db.url, { statementTimeoutMs: 150, applicationName: 'client-test', max: 2 })
    try {
      const { rows } = await pool.query(
        "SELECT current_setting('statement_timeout') AS timeout, current_setting('application_name') AS app",
      )
      expect(rows).toEqual([{ timeout: '150ms', app: 'client-test' }])
      if (!isEmbeddedTestDatabase()) {
        // PGlite cannot interrupt a running statement; real PostgreSQL must.
        await expect(pool.query('SELECT pg_sleep(5)')).rejects.toMatchObject({ code: '57014' })
      }
    } finally {
      await pool.end()
    }
  })

  it('keep test databases apart', async () => {
    await db.prisma.collection.create({
      data: { address: `0x${'1'.repeat(40)}`, name: 'Only Here', listed: true },
    })
    expect(await db.prisma.collection.count()).toBe(1)
    expect(await other.prisma.collection.count()).toBe(0)
  })

  it('run Prisma through the pg adapter: uint256 token ids exactly, bigints, interactive transactions', async () => {
    const collectionAddress = `0x${'2'.repeat(40)}`
    await db.prisma.$transaction(async (tx) => {
      await tx.collection.create({ data: { address: collectionAddress, name: 'Big Ids', totalSupply: 1n } })
      await tx.token.create({
        data: {
          collectionAddress,
          tokenId: new Prisma.Decimal(MAX_UINT256),
          currentOwner: `0x${'3'.repeat(40)}`,
        },
      })
    })
    const token = await db.prisma.token.findFirstOrThrow({ where: { collectionAddress } })
    expect(token.tokenId.toFixed()).toBe(MAX_UINT256)
    const { rows } = await db.pool.query(
      'SELECT token_id::text AS id FROM tokens WHERE collection_address = $1',
      [collectionAddress],
    )
    expect(rows).toEqual([{ id: MAX_UINT256 }])
    expect(
      (await db.prisma.collection.findUniqueOrThrow({ where: { address: collectionAddress } })).totalSupply,
    ).toBe(1n)

    // A failing interactive transaction leaves nothing behind.
    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.collection.create({ data: { address: `0x${'4'.repeat(40)}`, name: 'Rolled Back' } })
        throw new Error('abort')
      }),
    ).rejects.toThrow('abort')
    expect(await db.prisma.collection.count({ where: { name: 'Rolled Back' } })).toBe(0)
  })
})

describe('isDatabaseUnavailable', () => {
  it('recognises a refused connection, from pg and from Prisma', async () => {
    const pool = createPool(UNREACHABLE_URL, { max: 1 })
    const prisma = createPrisma(pool)
    try {
      const pgError = await pool.query('SELECT 1').catch((err: unknown) => err)
      expect(isDatabaseUnavailable(pgError)).toBe(true)
      const prismaError = await prisma.collection.count().catch((err: unknown) => err)
      expect(prismaError).toBeInstanceOf(Error)
      expect(isDatabaseUnavailable(prismaError)).toBe(true)
    } finally {
      await prisma.$disconnect()
      await pool.end()
    }
  })

  it.skipIf(isEmbeddedTestDatabase())(
    'recognises an administrator shutting the connection down',
    async () => {
      const db = await createTestDatabase()
      try {
        const victim = await db.pool.connect()
        // pg reports the termination as a client 'error' event when it arrives
        // between queries, else as the next query's rejection: take the first. The
        // listener stays: the end of the socket can emit a second 'error', which
        // without a listener would be thrown as an uncaught exception.
        const emitted = new Promise<unknown>((resolve) => victim.on('error', resolve))
        const { rows } = await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
        const admin = createPool(db.url, { max: 1 })
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
        await admin.end()
        const err = await Promise.race([emitted, victim.query('SELECT 1').catch((e: unknown) => e)])
        victim.release(true)
        expect(isDatabaseUnavailable(err)).toBe(true)
      } finally {
        await db.drop()
      }
    },
  )

  it('does not mistake a bad query or a constraint for an outage', async () => {
    const db = await createTestDatabase()
    try {
      expect(isDatabaseUnavailable(await db.pool.query('SELEC 1').catch((e: unknown) => e))).toBe(false)
      expect(
        isDatabaseUnavailable(await db.pool.query('SELECT * FROM nowhere').catch((e: unknown) => e)),
      ).toBe(false)
      const address = `0x${'5'.repeat(40)}`
      await db.prisma.user.create({ data: { address } })
      const duplicate = await db.prisma.user.create({ data: { address } }).catch((e: unknown) => e)
      expect(duplicate).toMatchObject({ code: 'P2002' })
      expect(isDatabaseUnavailable(duplicate)).toBe(false)
      expect(isDatabaseUnavailable(new Error('boom'))).toBe(false)
      expect(isDatabaseUnavailable(undefined)).toBe(false)
      expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false)
    } finally {
      await db.drop()
    }
  })
})

describe('urlWithSchema', () => {
  it('keeps other parameters and quotes unusual schema names', () => {
    const url = urlWithSchema('postgres://u:p@db.example:5433/app?sslmode=require', 'Mixed Case')
    expect(url.startsWith('postgres://u:p@db.example:5433/app?sslmode=require&options=')).toBe(true)
    expect(schemaFromUrl(url)).toBe('Mixed Case')
    expect(decodeURIComponent(url.split('options=')[1]!)).toBe('-c search_path="Mixed\\ Case",public')
  })
})
