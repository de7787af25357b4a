/**
 * No drift: a database migrated with prisma/migrations matches
 * prisma/schema.prisma — tables, columns, types, nullability, defaults,
 * primary keys, unique and plain indexes (columns, order, method, operator
 * class), foreign keys. Change the schema without a migration (or the other
 * way round) and this fails, naming the difference.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { actualSchema, diffSchemas, expectedSchema, type SchemaShape } from '@/test/schema-drift'

const schemaPath = new URL('../../prisma/schema.prisma', import.meta.url)
const datamodel = readFileSync(schemaPath, 'utf8')

describe('schema.prisma and the migrations', () => {
  let db: TestDatabase
  let actual: SchemaShape

  beforeAll(async () => {
    db = await createTestDatabase()
    actual = await actualSchema(db.pool, db.schema)
  })
  afterAll(async () => {
    await db?.drop()
  })

  it('produce the same database', async () => {
    const expected = await expectedSchema(datamodel)
    expect(diffSchemas(expected, actual)).toEqual([])
    // The comparison really covered the model, not two empty descriptions.
    expect(Object.keys(actual.tables).length).toBeGreaterThanOrEqual(15)
  })

  it('keep the types the API depends on', () => {
    const tokens = actual.tables.tokens
    const transfers = actual.tables.transfers
    expect(tokens?.columns.token_id).toEqual({ type: 'numeric(78,0)', notNull: true, default: null })
    expect(transfers?.columns.block_timestamp?.type).toBe('timestamp(6) with time zone')
    expect(actual.tables.collections?.columns.address?.type).toBe('character varying(42)')
    expect(actual.tables.api_keys?.columns.scopes).toEqual({ type: 'text[]', notNull: false, default: null })
    expect(actual.tables.token_documents?.columns.document?.type).toBe('jsonb')
    expect(tokens?.columns.attributes?.type).toBe('jsonb')
    expect(transfers?.indexes.transfers_event_type_feed_idx).toEqual({
      unique: false,
      method: 'btree',
      columns: ['event_type', 'block_timestamp DESC', 'id DESC'],
    })
    expect(actual.tables.collections?.indexes.collections_name_trgm_idx).toEqual({
      unique: false,
      method: 'gin',
      columns: ['name gin_trgm_ops'],
    })
  })

  // schema.prisma cannot state a collation, so the comparison above would not notice a
  // hex column (address, hash) added without COLLATE "C" (migration 20261123011500).
  it('compare every address and hash column byte by byte (COLLATE "C")', async () => {
    const { rows } = await db.pool.query<{ column: string; collation: string | null }>(
      `SELECT table_name || '.' || column_name AS column, collation_name AS collation
         FROM information_schema.columns
        WHERE table_schema = $1
          AND ((data_type = 'character varying' AND character_maximum_length IN (42, 66))
               OR (data_type = 'character' AND character_maximum_length = 64))
        ORDER BY 1`,
      [db.schema],
    )
    expect(rows.length).toBeGreaterThanOrEqual(20)
    expect(rows.filter((r) => r.collation !== 'C')).toEqual([])
  })

  it('install pg_trgm and btree_gin in public, where every schema finds them', async () => {
    const { rows } = await db.pool.query<{ extension: string; schema: string }>(
      `SELECT e.extname AS extension, n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
       WHERE e.extname IN ('pg_trgm', 'btree_gin') ORDER BY 1`,
    )
    expect(rows).toEqual([
      { extension: 'btree_gin', schema: 'public' },
      { extension: 'pg_trgm', schema: 'public' },
    ])
  })

  // The test above is only worth something if it notices drift; these prove it does.
  it('notices a field added to schema.prisma without a migration', async () => {
    const edited = datamodel.replace(
      /(model Collection \{\n)/,
      '$1  launchedAt DateTime? @map("launched_at") @db.Timestamptz(6)\n',
    )
    expect(edited).not.toBe(datamodel)
    const problems = diffSchemas(await expectedSchema(edited), actual)
    expect(problems).toEqual(['column collections.launched_at: in schema.prisma but not in the database'])
  })

  it('notices a changed index, type, nullability and default', async () => {
    const edited = datamodel
      .replace(
        '@@index([eventType, blockTimestamp(sort: Desc), id(sort: Desc)], map: "transfers_event_type_feed_idx")',
        '@@index([eventType, blockTimestamp, id], map: "transfers_event_type_feed_idx")',
      )
      .replace(
        'tokenId                 Decimal   @map("token_id") @db.Decimal(78, 0)',
        'tokenId                 Decimal   @map("token_id") @db.Decimal(65, 0)',
      )
      .replace('symbol           String?', 'symbol           String')
      .replace(
        'standard         String   @default("ERC721")',
        'standard         String   @default("ERC-721")',
      )
    const problems = diffSchemas(await expectedSchema(edited), actual)
    expect(problems).toHaveLength(4)
    expect(problems.join('\n')).toMatch(/index transfers.transfers_event_type_feed_idx/)
    expect(problems.join('\n')).toMatch(/column tokens.token_id: .*numeric\(65,0\)/)
    expect(problems.join('\n')).toMatch(/column collections.symbol: .*"notNull":true/)
    expect(problems.join('\n')).toMatch(/column collections.standard: .*'ERC-721'::text/)
  })

  it('notices a table the schema does not know', async () => {
    await db.pool.query('CREATE TABLE stray (id int PRIMARY KEY)')
    try {
      const problems = diffSchemas(await expectedSchema(datamodel), await actualSchema(db.pool, db.schema))
      expect(problems).toEqual(['table stray: in the database but not in schema.prisma'])
    } finally {
      await db.pool.query('DROP TABLE stray')
    }
  })
})
