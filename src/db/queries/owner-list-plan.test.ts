/**
 * The zero address's NFT list (GET /v1/owners/0x0000000000000000000000000000000000000000/nfts,
 * the documented way to list burned ERC-721 tokens) reads its page, not every
 * ERC-1155 token of the index.
 *
 * Every ERC-1155 token row has current_owner = the zero address, so
 * tokens_owner_idx's range for the zero address holds all ERC-1155 tokens
 * beside the burned ERC-721 ones, and selectOwnerTokens (tokens.ts) keeps the
 * list ERC-721-only with `t.total_supply IS NULL`, a column of the heap row:
 * any page the burned tokens after the cursor could not fill fetched the row
 * of every ERC-1155 token after the cursor and discarded it (bench:seed,
 * 100,000 ERC-1155 tokens: 5,761 buffers, 30 ms warm, 100 ms cold for an
 * empty page; linear in the ERC-1155 tokens indexed). The partial index
 * tokens_burned_erc721_idx (collection_address, token_id, id) WHERE
 * current_owner = the zero address AND total_supply IS NULL (migration
 * 20261203100000_tokens_burned_erc721_idx) holds the burned ERC-721 tokens
 * only: the list is one range of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectOwnerTokens } from '@/db/queries/tokens'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { analyzingPool, rowsRead } from '@/test/query-plans'

let db: TestDatabase
const ZERO = '0x0000000000000000000000000000000000000000'
const erc721 = `0x${'1'.repeat(40)}`
const erc1155 = `0x${'e'.repeat(40)}`
const MULTI_TOKENS = 5_000

beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query(
    `INSERT INTO collections (address, name, symbol, listed, standard)
     VALUES ($1, 'Burned', 'B', true, 'ERC721'), ($2, 'Edition', 'E', true, 'ERC1155')`,
    [erc721, erc1155],
  )
  // Three burned ERC-721 tokens: the zero address's whole ERC-721 list.
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned)
     SELECT $1, g, $2, true FROM generate_series(1, 3) g`,
    [erc721, ZERO],
  )
  // ERC-1155 ids: current_owner is the zero address, as the indexer stores them.
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, total_supply, holder_count)
     SELECT $1, g, $2, 1, 1 FROM generate_series(1, $3::int) g`,
    [erc1155, ZERO, MULTI_TOKENS],
  )
  await db.pool.query('ANALYZE tokens')
}, 120_000)

afterAll(async () => {
  await db?.drop()
})

async function tokenRowsRead(after?: { collection: string; tokenId: string; id: number }) {
  const { pool, plans } = analyzingPool(db.pool)
  const rows = await selectOwnerTokens({ pool }, { owner: ZERO, rows: 21, after })
  return { rows, read: rowsRead(plans[0]!.nodes, 'tokens') }
}

describe("the zero address's ERC-721 list beside ERC-1155 tokens", () => {
  it('first page (3 burned tokens): reads about a page, not every ERC-1155 token', async () => {
    const { rows, read } = await tokenRowsRead()
    expect(rows.map((r) => r.token_id)).toEqual(['1', '2', '3'])
    // 3 rows of the page, read again by key: a few dozen at most (5,003 + 3 on tokens_owner_idx).
    expect(read).toBeLessThan(100)
  })

  it('a cursor past the burned tokens: an empty page read from a bounded range', async () => {
    const { rows, read } = await tokenRowsRead({ collection: erc721, tokenId: '3', id: 3 })
    expect(rows).toHaveLength(0)
    expect(read).toBeLessThan(100)
  })
})
