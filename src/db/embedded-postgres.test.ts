/**
 * The embedded PostgreSQL (PGlite behind the wire protocol) as the services
 * use it: pools of several connections, transactions, Prisma through the
 * adapter, settings per connection, pg_trgm, btree_gin, a connection limit, and data
 * that survives a restart. Runs its own server whatever the run's database is.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPool, createPrisma, isDatabaseUnavailable, urlWithSchema } from '@/db/client'
import { migrate } from '@/db/migrate'
import { collectionMatchesSql } from '@/db/queries/tokens'
import { type EmbeddedPostgres, startEmbeddedPostgres } from '@/dev/postgres'

const MAX_CONNECTIONS = 20
const address = (digit: string) => `0x${digit.repeat(40)}`

describe('embedded PostgreSQL (PGlite)', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'embedded-pg-test-'))
  let server: EmbeddedPostgres
  let pool: pg.Pool

  beforeAll(async () => {
    server = await startEmbeddedPostgres({ dataDir, maxConnections: MAX_CONNECTIONS })
    await migrate(server.url)
    pool = createPool(server.url, { max: 8 })
  })
  afterAll(async () => {
    await pool?.end()
    await server?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('listens on loopback, on a free port', () => {
    expect(server.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/)
    expect(server.url).not.toContain(':5432/')
  })

  it('keeps a second server off its data directory', async () => {
    // Same process: a pid file naming a running process (here: the parent) blocks.
    const pidFile = path.join(dataDir, 'embedded-postgres.pid')
    const own = readFileSync(pidFile, 'utf8')
    writeFileSync(pidFile, String(process.ppid))
    try {
      await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(`is in use by process ${process.ppid}`)
    } finally {
      writeFileSync(pidFile, own)
    }
  })

  it('answers many parameterised queries from several connections at once, each with its own result', async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        pool.query<{ v: number; t: string }>('SELECT $1::int AS v, $2::text AS t', [i, `n${i}`]),
      ),
    )
    expect(results.map((result) => result.rows[0])).toEqual(results.map((_, i) => ({ v: i, t: `n${i}` })))
    expect(pool.totalCount).toBeGreaterThan(1)
  })

  it('gives each connection its own named prepared statements, gone with the connection', async () => {
    const clients = Array.from({ length: 3 }, () => new pg.Client({ connectionString: server.url }))
    const [first, second, third] = clients as [pg.Client, pg.Client, pg.Client]
    const prepared = async () =>
      (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows[0]!.n
    try {
      await Promise.all([first.connect(), second.connect()])
      const before = await prepared()
      // The same name with another statement on each connection, as on a server.
      for (let i = 0; i < 3; i++) {
        const [a, b] = await Promise.all([
          first.query({ name: 'shared_name', text: 'SELECT $1::int + 1 AS v', values: [i] }),
          second.query({ name: 'shared_name', text: "SELECT $1::text || '!' AS v", values: [`n${i}`] }),
        ])
        expect([a.rows, b.rows]).toEqual([[{ v: i + 1 }], [{ v: `n${i}!` }]])
      }
      expect(await prepared()).toBe(before + 2)
      await first.end()
      expect(await prepared()).toBe(before + 1)
      // A new connection may take the name of one that left.
      await third.connect()
      const c = await third.query({ name: 'shared_name', text: 'SELECT $1::int * 2 AS v', values: [21] })
      expect(c.rows).toEqual([{ v: 42 }])
      // One that leaves while another holds the backend (a transaction) is deallocated after it.
      await third.query('BEGIN')
      await second.end()
      const inside = await third.query({ name: 'shared_name', text: 'SELECT $1::int * 2 AS v', values: [4] })
      expect(inside.rows).toEqual([{ v: 8 }])
      await third.query('COMMIT')
      expect(await prepared()).toBe(before + 1)
    } finally {
      await Promise.all(clients.map((client) => client.end().catch(() => {})))
    }
  })

  it('keeps a transaction to its connection: no dirty reads, rollback undoes', async () => {
    const writer = await pool.connect()
    try {
      await writer.query('BEGIN')
      await writer.query('INSERT INTO users (address) VALUES ($1)', [address('a')])
      // Asked while the transaction is open; answered after it commits.
      const reading = pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE address = $1', [
        address('a'),
      ])
      await new Promise((resolve) => setTimeout(resolve, 50))
      await writer.query('COMMIT')
      expect((await reading).rows).toEqual([{ n: 1 }])

      await writer.query('BEGIN')
      await writer.query('INSERT INTO users (address) VALUES ($1)', [address('b')])
      await writer.query('ROLLBACK')
      expect((await pool.query('SELECT address FROM users ORDER BY id')).rows).toEqual([
        { address: address('a') },
      ])
    } finally {
      writer.release()
    }
  })

  it('rolls back what a vanished connection left open, and serves the others meanwhile', async () => {
    const quitter = new pg.Client({ connectionString: server.url })
    await quitter.connect()
    await quitter.query('BEGIN')
    await quitter.query('INSERT INTO users (address) VALUES ($1)', [address('c')])
    await quitter.end()
    expect(
      (await pool.query('SELECT count(*)::int AS n FROM users WHERE address = $1', [address('c')])).rows,
    ).toEqual([{ n: 0 }])
  })

  it('rolls back the open transaction of a client that dies without a goodbye (kill -9)', async () => {
    const victim = new pg.Client({ connectionString: server.url })
    victim.on('error', () => {})
    await victim.connect()
    await victim.query('BEGIN')
    await victim.query('INSERT INTO users (address) VALUES ($1)', [address('9')])
    // Cut the TCP connection as a killed process would: no Terminate message.
    ;(victim as unknown as { connection: { stream: import('node:net').Socket } }).connection.stream.destroy()
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM users WHERE address = $1', [
      address('9'),
    ])
    expect(rows).toEqual([{ n: 0 }])
  })

  it('gives each connection its own settings: startup options, SET, statement_timeout', async () => {
    await pool.query(
      'CREATE SCHEMA IF NOT EXISTS alpha; CREATE TABLE IF NOT EXISTS alpha.probe (name text); INSERT INTO alpha.probe VALUES ($$alpha$$)',
    )
    await pool.query(
      'CREATE SCHEMA IF NOT EXISTS beta; CREATE TABLE IF NOT EXISTS beta.probe (name text); INSERT INTO beta.probe VALUES ($$beta$$)',
    )
    const alpha = createPool(urlWithSchema(server.url, 'alpha'), { max: 3, statementTimeoutMs: 1234 })
    const beta = createPool(urlWithSchema(server.url, 'beta'), { max: 3 })
    const manual = new pg.Client({ connectionString: server.url })
    await manual.connect()
    try {
      await manual.query('SET search_path TO beta')
      const probe = async (client: pg.Pool | pg.Client) =>
        (await client.query<{ name: string }>('SELECT name FROM probe')).rows[0]?.name
      const manualAnswers: (string | undefined)[] = []
      const [alphaAnswers, betaAnswers] = await Promise.all([
        Promise.all(Array.from({ length: 30 }, () => probe(alpha))),
        Promise.all(Array.from({ length: 30 }, () => probe(beta))),
        (async () => {
          // One pg.Client runs one query at a time.
          for (let i = 0; i < 30; i++) manualAnswers.push(await probe(manual))
        })(),
      ])
      expect(new Set(alphaAnswers)).toEqual(new Set(['alpha']))
      expect(new Set(betaAnswers)).toEqual(new Set(['beta']))
      expect(new Set(manualAnswers)).toEqual(new Set(['beta']))
      expect((await alpha.query('SHOW statement_timeout')).rows).toEqual([{ statement_timeout: '1234ms' }])
      expect((await beta.query('SHOW statement_timeout')).rows).toEqual([{ statement_timeout: '0' }])
      expect((await pool.query('SHOW search_path')).rows).toEqual([{ search_path: 'public' }])
    } finally {
      await manual.end()
      await Promise.all([alpha.end(), beta.end()])
    }
  })

  it('runs Prisma through the pg adapter, transactions and concurrent queries included', async () => {
    const prisma = createPrisma(pool)
    try {
      await prisma.$transaction(async (tx) => {
        await tx.collection.create({
          data: { address: address('d'), name: 'Dusk Dragons', symbol: 'DUSK', listed: true },
        })
        await tx.collection.create({
          data: { address: address('e'), name: 'Ember Eagles', symbol: 'EMB', listed: true },
        })
      })
      const counts = await Promise.all(
        Array.from({ length: 20 }, () => prisma.collection.count({ where: { listed: true } })),
      )
      expect(counts).toEqual(Array(20).fill(2))
      await expect(
        prisma.$transaction(async (tx) => {
          await tx.collection.create({ data: { address: address('f'), name: 'Never' } })
          throw new Error('abort')
        }),
      ).rejects.toThrow('abort')
      expect(await prisma.collection.count()).toBe(2)
    } finally {
      await prisma.$disconnect()
    }
  })

  it('has pg_trgm: similarity, and the trigram index serves a substring search', async () => {
    const { rows } = await pool.query<{ name: string; score: number }>(
      "SELECT name, similarity(name, 'dragon') AS score FROM collections WHERE name % 'dragons' ORDER BY score DESC",
    )
    expect(rows.map((r) => r.name)).toEqual(['Dusk Dragons'])
    expect(rows[0]!.score).toBeGreaterThan(0.3)
    const client = await pool.connect()
    try {
      await client.query('SET enable_seqscan = off')
      const plan = await client.query("EXPLAIN SELECT id FROM collections WHERE name ILIKE '%agon%'")
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('collections_name_trgm_idx')
      await client.query('RESET enable_seqscan')
    } finally {
      client.release()
    }
  })

  it("has btree_gin: a trait filter reads the collection's matches from tokens_collection_attributes_idx", async () => {
    const [mine, other] = [address('1'), address('2')]
    await pool.query(`INSERT INTO collections (address, name) VALUES ($1, 'Mine'), ($2, 'Other')`, [
      mine,
      other,
    ])
    await pool.query(
      `INSERT INTO tokens (collection_address, token_id, current_owner, metadata_status, attributes)
       SELECT c, g, $3, 'ok', jsonb_build_array(jsonb_build_object('trait_type', 'Hat', 'value', v))
         FROM (VALUES ($1, 'Cap'), ($2, 'Crown')) AS x(c, v), generate_series(1, 300) g`,
      [mine, other, address('3')],
    )
    await pool.query('VACUUM ANALYZE tokens')
    try {
      // The statement of a filtered page's matches (src/db/queries/tokens.ts), as the API runs it.
      const matches = collectionMatchesSql(['$2'])
      const crown = [JSON.stringify([{ trait_type: 'Hat', value: 'Crown' }])]
      expect((await pool.query(matches, [mine, crown])).rowCount).toBe(0)
      expect((await pool.query(matches, [other, crown])).rowCount).toBe(300)
      const plan = await pool.query(`EXPLAIN ${matches}`, [mine, crown])
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(
        /Bitmap Index Scan on tokens_collection_attributes_idx.*\n\s+Index Cond: .*collection_address.*attributes @>/,
      )
    } finally {
      await pool.query('DELETE FROM tokens WHERE collection_address = ANY($1)', [[mine, other]])
      await pool.query('DELETE FROM collections WHERE address = ANY($1)', [[mine, other]])
    }
  })

  it('refuses COPY FROM STDIN cleanly instead of losing the backend', async () => {
    await expect(pool.query('COPY users (address) FROM STDIN')).rejects.toMatchObject({
      code: '0A000',
      message: expect.stringMatching(/COPY FROM STDIN is not supported/),
    })
    expect((await pool.query('SELECT count(*)::int AS n FROM users')).rows).toEqual([{ n: 1 }])
  })

  it(`refuses connection ${MAX_CONNECTIONS + 1} with "too many clients" (SQLSTATE 53300)`, async () => {
    await pool.end()
    const clients: pg.Client[] = []
    try {
      for (let i = 0; i < MAX_CONNECTIONS; i++) {
        const client = new pg.Client({ connectionString: server.url })
        await client.connect()
        clients.push(client)
      }
      const extra = new pg.Client({ connectionString: server.url })
      const err = await extra.connect().catch((e: unknown) => e)
      expect(err).toMatchObject({ code: '53300', message: 'sorry, too many clients already' })
      expect(isDatabaseUnavailable(err)).toBe(true)
    } finally {
      await Promise.all(clients.map((c) => c.end()))
      pool = createPool(server.url, { max: 8 })
    }
  })

  it('keeps its data across stop and start; clients of the stopped server see an outage', async () => {
    const before = createPool(server.url, { max: 1 })
    await before.query('SELECT 1')
    await server.stop()
    const err = await before.query('SELECT 1').catch((e: unknown) => e)
    expect(isDatabaseUnavailable(err)).toBe(true)
    await before.end()
    await pool.end()

    server = await startEmbeddedPostgres({ dataDir, maxConnections: MAX_CONNECTIONS })
    pool = createPool(server.url, { max: 2 })
    expect((await pool.query('SELECT address FROM users')).rows).toEqual([{ address: address('a') }])
    expect((await pool.query('SELECT name FROM collections ORDER BY name')).rows).toEqual([
      { name: 'Dusk Dragons' },
      { name: 'Ember Eagles' },
    ])
    expect(await migrate(server.url)).toEqual({ applied: [] })
    expect((await pool.query("SELECT similarity('dragon', 'dragons') > 0.5 AS ok")).rows).toEqual([
      { ok: true },
    ])
  })
})
