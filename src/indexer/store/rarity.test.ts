/**
 * Stored rarity (docs/database.md, "Stored rarity"): the chain's writes
 * (commits, burns, reorganisations) and metadata writes mark a collection,
 * the recompute stores exactly what the on-read computation gives — the
 * statement the API ran before rankings were stored, kept here as the
 * reference — and readers never see half a ranking.
 */
import pino from 'pino'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectCollectionTokensByRarity } from '@/db/queries/rarity'
import { selectCollectionTraits } from '@/db/queries/traits'
import { mulberry32 } from '@/lib/random'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { verifiedBatch } from '@/test/ingest-batch'
import type { TransferEvent } from '../events/types'
import { runRarityWorker } from '../rarity/worker'
import { commitBatch } from './commit'
import { saveTokenOutcomes } from './metadata-queue'
import { recomputeCollectionRarity, recomputeWithin } from './rarity'
import { rollbackAfter } from './rollback'
import { ensureIndexerState } from './state'

let db: TestDatabase
const ZERO = '0x0000000000000000000000000000000000000000' as Hex
const ALICE = '0x00000000000000000000000000000000000000a1' as Hex
const BOB = '0x00000000000000000000000000000000000000b2' as Hex
const NFT = '0x00000000000000000000000000000000000000f1' as Hex

const rand = mulberry32(7_007)
const TYPES = ['Background', 'Eyes', 'Hat', 'Level']
const VALUES: Array<string | number | boolean> = ['Blue', 'Red', 'Green', 1, '1', 2, true, 'true', 'Gold']
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
function randomAttributes() {
  const out: Array<{ trait_type: string; value: string | number | boolean }> = []
  for (const type of TYPES) {
    if (rand() < 0.75) out.push({ trait_type: type, value: pick(VALUES) })
    if (rand() < 0.05) out.push({ trait_type: type, value: pick(VALUES) })
  }
  return out
}

// ── the chain side: blocks committed as the sync commits them ──
let last: bigint | null = null
let fork = 0
async function commit(transfers: Array<{ token: number; from: Hex; to: Hex }>): Promise<bigint> {
  const block = last === null ? 0n : last + 1n
  fork++
  const hash = (n: number) =>
    `0x${block.toString(16).padStart(32, '0')}${n.toString(16).padStart(32, '0')}` as Hex
  const events: TransferEvent[] = transfers.map((t, i) => ({
    collection: NFT,
    tokenId: BigInt(t.token),
    from: t.from,
    to: t.to,
    blockNumber: block,
    blockHash: hash(fork),
    blockTimestamp: BigInt(1_600_000_000 + Number(block) * 12),
    transactionHash: hash(fork * 1000 + i),
    logIndex: i,
    batchIndex: 0,
    standard: 'ERC721' as const,
  }))
  await commitBatch(
    db.pool,
    { network: 'devnet', startBlock: 0n, expectedLastIndexed: last, keepBlocks: 64n },
    verifiedBatch(block, block, events, hash(fork)),
  )
  last = block
  return block
}

/** A metadata fetch's outcome written as the metadata queue writes it. */
async function fetched(tokens: number[], outcome = 'ok', attributes = randomAttributes) {
  // A token fetched before is fetched again as its re-check.
  const { rows } = await db.pool.query<{ id: string; attempts: number; next_at: string; recheck: boolean }>(
    `SELECT id::text, metadata_attempts AS attempts, metadata_next_attempt_at IS NULL AS recheck,
            coalesce(metadata_next_attempt_at, metadata_recheck_at)::text AS next_at
       FROM tokens WHERE collection_address = $1 AND token_id = ANY($2::numeric[])`,
    [NFT, tokens],
  )
  expect(rows).toHaveLength(tokens.length)
  await saveTokenOutcomes(
    db.pool,
    rows.map((r) => {
      const attrs = JSON.stringify(attributes())
      return {
        id: r.id,
        outcome,
        uri: `ipfs://x/${r.id}`,
        metadata: JSON.stringify({ name: `#${r.id}`, attributes: JSON.parse(attrs) }),
        description: null,
        attributes: attrs,
        animationUrl: null,
        externalUrl: null,
        backgroundColor: null,
        name: `#${r.id}`,
        image: null,
        media: null,
        retryAt: null,
        recheckAt: new Date(Date.now() + 3_600_000).toISOString(),
        recheck: r.recheck,
        attempts: r.attempts,
        nextAttemptAt: r.next_at,
        deferred: false,
        hostOutcome: null,
      }
    }),
  )
}

/** The ranking as the API computed it on read before it was stored (the reference). */
async function onRead(): Promise<Array<{ token_id: string; score: string; rank: number }>> {
  const { rows } = await db.pool.query(
    `WITH counted AS MATERIALIZED (
      SELECT t.id, t.token_id, t.attributes FROM tokens t
       WHERE t.collection_address = $1 AND NOT t.is_burned AND t.metadata_status = 'ok'
    ), n AS MATERIALIZED (
      SELECT count(*)::float8 AS n FROM counted
    ), pairs AS MATERIALIZED (
      SELECT DISTINCT c.id, a->>'trait_type' AS trait_type, a->'value' AS value
        FROM counted c,
             jsonb_array_elements(CASE WHEN jsonb_typeof(c.attributes) = 'array' THEN c.attributes ELSE '[]' END) a
       WHERE jsonb_typeof(a->'trait_type') = 'string' AND jsonb_typeof(a->'value') IN ('string', 'number', 'boolean')
    ), token_types AS MATERIALIZED (
      SELECT id, trait_type, k, count(*) OVER (PARTITION BY trait_type) AS kt
        FROM (SELECT id, trait_type, min(k) AS k
                FROM (SELECT id, trait_type, count(*) OVER (PARTITION BY trait_type, value) AS k FROM pairs) pv
               GROUP BY id, trait_type) m
    ), ic AS MATERIALIZED (
      SELECT tt.id, -ln(tt.k / n.n) / ln(2) AS value_ic,
             CASE WHEN n.n > tt.kt THEN -ln((n.n - tt.kt) / n.n) / ln(2) ELSE 0 END AS missing_ic, tt.trait_type
        FROM token_types tt, n
    ), scored AS (
      SELECT id, max(token_id) AS token_id,
             round(((SELECT coalesce(sum(missing_ic), 0) FROM (SELECT DISTINCT trait_type, missing_ic FROM ic) d)
                    + sum(x))::numeric, 6) AS score
        FROM (SELECT id, NULL::numeric AS token_id, value_ic - missing_ic AS x FROM ic
              UNION ALL
              SELECT id, token_id, 0 FROM counted) u
       GROUP BY id
    )
    SELECT s.token_id::text, s.score::text, (rank() OVER (ORDER BY s.score DESC))::int AS rank
      FROM scored s ORDER BY s.score DESC, s.token_id, s.id`,
    [NFT],
  )
  return rows
}

/** The /traits counts as the API computed them on read before they were stored. */
async function traitsOnRead(): Promise<
  Array<{ trait_type: string; value: unknown; n: number; type_n: number }>
> {
  const { rows } = await db.pool.query(
    `WITH pairs AS (
      SELECT DISTINCT t.id, a->>'trait_type' AS trait_type, a->'value' AS value
        FROM tokens t, jsonb_array_elements(CASE WHEN jsonb_typeof(t.attributes) = 'array' THEN t.attributes ELSE '[]' END) a
       WHERE t.collection_address = $1 AND NOT t.is_burned AND t.metadata_status = 'ok'
         AND jsonb_typeof(a->'trait_type') = 'string' AND jsonb_typeof(a->'value') IN ('string', 'number', 'boolean')
    ), types AS (SELECT trait_type, count(DISTINCT id)::int AS n FROM pairs GROUP BY trait_type)
    SELECT p.trait_type, p.value, count(*)::int AS n, min(ty.n) AS type_n
      FROM pairs p JOIN types ty USING (trait_type) GROUP BY p.trait_type, p.value
     ORDER BY min(ty.n) DESC, p.trait_type COLLATE "C", count(*) DESC, p.value::text COLLATE "C"`,
    [NFT],
  )
  return rows
}

/** The stored ranking as sort=rarity serves it, walked page by page. */
async function stored(traits?: string[][], pageSize = 7) {
  const out: Array<{ token_id: string; score: string; rank: number }> = []
  let after: { tokenId: string; id: number } | undefined
  for (let i = 0; i < 10_000; i++) {
    const rows = await selectCollectionTokensByRarity(db, { address: NFT, after, rows: pageSize, traits })
    const page = rows.filter((r) => r.id !== null)
    out.push(
      ...page.map((r) => ({ token_id: r.token_id, score: r.rarity_score!, rank: Number(r.rarity_rank) })),
    )
    if (page.length < pageSize) return out
    const lastRow = page.at(-1)!
    after = { tokenId: lastRow.token_id, id: Number(lastRow.id) }
  }
  throw new Error('walk did not end')
}

async function storedTraits() {
  const rows = await selectCollectionTraits(db, { address: NFT, maxTypes: 100, maxValues: 1000 })
  return rows
    .filter((r) => r.trait_type !== null)
    .map((r) => ({
      trait_type: r.trait_type,
      value: r.value,
      n: Number(r.value_count),
      type_n: Number(r.type_count),
    }))
}

async function dirty(): Promise<boolean> {
  const { rowCount } = await db.pool.query('SELECT 1 FROM rarity_dirty WHERE collection_address = $1', [NFT])
  return rowCount === 1
}

async function expectStoredEqualsOnRead() {
  expect(await dirty()).toBe(false)
  const reference = await onRead()
  expect(reference.length).toBeGreaterThan(0)
  expect(await stored()).toEqual(reference)
  expect(await storedTraits()).toEqual(await traitsOnRead())
}

const TOKENS = 120
const live = new Set<number>()

beforeAll(async () => {
  db = await createTestDatabase()
  await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 0 })
  const mints = Array.from({ length: TOKENS }, (_, i) => ({
    token: i + 1,
    from: ZERO,
    to: i % 2 ? ALICE : BOB,
  }))
  await commit(mints)
  for (const m of mints) live.add(m.token)
  // A mint alone changes no ranking: its metadata is pending.
  expect(await dirty()).toBe(false)
  await fetched(mints.slice(0, 110).map((m) => m.token))
  // Some tokens without attributes at all, some whose fetch failed: counted or not, as the API counts.
  await fetched([111, 112], 'ok', () => [])
  await fetched([113, 114], 'http_error')
}, 60_000)

afterAll(async () => {
  await db?.drop()
})

describe('stored rarity', () => {
  it('a metadata write marks the collection; the recompute stores what the on-read computation gives', async () => {
    expect(await dirty()).toBe(true)
    // Not computed yet: nothing ranked, no counts.
    expect(await stored()).toEqual([])
    expect(await storedTraits()).toEqual([])
    await recomputeCollectionRarity(db.pool, NFT)
    await expectStoredEqualsOnRead()

    const before = await stored()
    await fetched([5, 6, 7])
    expect(await dirty()).toBe(true)
    // Until the recompute, readers keep the stored ranking.
    expect(await stored()).toEqual(before)
    await recomputeCollectionRarity(db.pool, NFT)
    await expectStoredEqualsOnRead()
    // A re-check that finds the same document changes nothing and marks nothing.
    const same = await db.pool.query<{ attributes: unknown }>(
      'SELECT attributes FROM tokens WHERE collection_address = $1 AND token_id = 9',
      [NFT],
    )
    await fetched([9], 'ok', () => same.rows[0]!.attributes as never)
    expect(await dirty()).toBe(false)
  })

  it('keeps the ranking under trait filters: the matching tokens in the collection-wide order', async () => {
    await recomputeCollectionRarity(db.pool, NFT)
    const reference = await onRead()
    const { rows } = await db.pool.query<{ token_id: string }>(
      `SELECT token_id::text FROM tokens WHERE collection_address = $1
          AND (attributes @> '[{"trait_type":"Background","value":"Blue"}]' OR attributes @> '[{"trait_type":"Background","value":"Red"}]')
          AND attributes @> '[{"trait_type":"Hat","value":1}]'`,
      [NFT],
    )
    const matching = new Set(rows.map((r) => r.token_id))
    expect(matching.size).toBeGreaterThan(1)
    const filters = [
      ['[{"trait_type":"Background","value":"Blue"}]', '[{"trait_type":"Background","value":"Red"}]'],
      ['[{"trait_type":"Hat","value":1}]'],
    ]
    expect(await stored(filters, 2)).toEqual(reference.filter((t) => matching.has(t.token_id)))
  })

  it('a burn marks the collection; the burned token leaves the ranking at once and the ranks follow', async () => {
    await recomputeCollectionRarity(db.pool, NFT)
    await commit([{ token: 3, from: BOB, to: ZERO }])
    live.delete(3)
    expect(await dirty()).toBe(true)
    // Listed no more (the ranks are still those of the last computation).
    expect((await stored()).map((t) => t.token_id)).not.toContain('3')
    await recomputeCollectionRarity(db.pool, NFT)
    await expectStoredEqualsOnRead()
  })

  it('a transfer between owners marks nothing', async () => {
    await commit([{ token: 10, from: BOB, to: ALICE }])
    expect(await dirty()).toBe(false)
  })

  it('a reorganisation undoing a mint and a burn marks the collection; the recompute follows it', async () => {
    const ancestor = last!
    await recomputeCollectionRarity(db.pool, NFT)
    const before = await onRead()
    // An orphaned block: a token minted (and fetched: ranked), another burned.
    await commit([
      { token: 500, from: ZERO, to: ALICE },
      { token: 20, from: BOB, to: ZERO },
    ])
    await fetched([500])
    await recomputeCollectionRarity(db.pool, NFT)
    await expectStoredEqualsOnRead()
    expect((await stored()).map((t) => t.token_id)).toContain('500')
    expect((await stored()).map((t) => t.token_id)).not.toContain('20')

    await rollbackAfter(
      db.pool,
      { network: 'devnet', startBlock: 0n, lastSeenBlock: last!, chainConfirmedBlock: ancestor },
      ancestor,
    )
    last = ancestor
    expect(await dirty()).toBe(true)
    await recomputeCollectionRarity(db.pool, NFT)
    await expectStoredEqualsOnRead()
    // Back to the ranking before the orphaned block: token 500 gone, token 20 ranked again.
    expect(await stored()).toEqual(before)
  })

  it('readers see the old ranking or the new one, never a mix', async () => {
    await recomputeCollectionRarity(db.pool, NFT)
    const old = await stored(undefined, 1000)
    // A change that moves every score: one token's rare value becomes common and back.
    await db.pool.query(
      'UPDATE tokens SET attributes = $2::jsonb WHERE collection_address = $1 AND token_id = 1',
      [NFT, JSON.stringify(UNIQUE)],
    )
    const client = await db.pool.connect()
    try {
      await client.query('BEGIN')
      await recomputeWithin(client, NFT)
      // Written but not committed: readers still read the old ranking whole.
      expect(await stored(undefined, 1000)).toEqual(old)
      expect(await stored(undefined, 5)).toEqual(old)
      await client.query('COMMIT')
    } finally {
      client.release()
    }
    const next = await stored(undefined, 1000)
    expect(next).toEqual(await onRead())
    expect(next).not.toEqual(old)

    // Recomputes that flip between the two states, with readers reading whole rankings meanwhile.
    const states = [JSON.stringify(old), JSON.stringify(next)]
    let stop = false
    let reads = 0
    const reader = (async () => {
      while (!stop) {
        const seen = JSON.stringify(await stored(undefined, 1000))
        expect(states).toContain(seen)
        reads++
      }
    })()
    // At least ten flips, and on until the reader has read during them (a loaded machine may
    // schedule it late).
    for (let i = 0; i < 10 || (reads < 20 && i < 1_000); i++) {
      const attributes = i % 2 === 0 ? before1 : UNIQUE
      await db.pool.query(
        'UPDATE tokens SET attributes = $2::jsonb WHERE collection_address = $1 AND token_id = 1',
        [NFT, JSON.stringify(attributes)],
      )
      await recomputeCollectionRarity(db.pool, NFT)
    }
    stop = true
    await reader
    expect(reads).toBeGreaterThan(3)
  })

  it('the worker recomputes a marked collection once its change is older than the debounce', async () => {
    await fetched([30, 31])
    expect(await dirty()).toBe(true)
    const controller = new AbortController()
    const worker = runRarityWorker(
      { pool: db.pool, logger: pino({ level: 'silent' }), signal: controller.signal },
      { debounceMs: 300, pollMs: 50 },
    )
    try {
      const started = Date.now()
      while (await dirty()) {
        expect(Date.now() - started).toBeLessThan(10_000)
        await new Promise((r) => setTimeout(r, 50))
      }
      expect(Date.now() - started).toBeGreaterThanOrEqual(200)
      await expectStoredEqualsOnRead()
    } finally {
      controller.abort()
      await worker
    }
  })
})

describe('stored rarity under hostile documents', () => {
  const WIDE = '0x00000000000000000000000000000000000000e1'
  const BROKEN = '0x00000000000000000000000000000000000000e2'
  const FINE = '0x00000000000000000000000000000000000000e3'

  /** Counted tokens 1..count of `collection`, with the attributes `attributes(n)` builds in SQL. */
  async function countedTokens(collection: string, count: number, attributes: string) {
    await db.pool.query(
      `INSERT INTO collections (address, name, symbol, listed) VALUES ($1, 'C', 'C', true) ON CONFLICT DO NOTHING`,
      [collection],
    )
    await db.pool.query(
      `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, metadata_status, attributes)
       SELECT $1, n, $2, false, 'ok', ${attributes} FROM generate_series(1, $3::int) n`,
      [collection, ALICE, count],
    )
  }

  it("a type's stored values stop at its byte cap; the counts still say how many there are", async () => {
    // 150 distinct values of about 1,000 bytes: 150 kB for one type, within every per-token cap.
    await countedTokens(
      WIDE,
      150,
      `jsonb_build_array(jsonb_build_object('trait_type', 'Blob', 'value', repeat('x', 990) || n),
                         jsonb_build_object('trait_type', 'Hat', 'value', CASE WHEN n % 2 = 0 THEN 'Cap' ELSE 'Crown' END))`,
    )
    await expect(recomputeCollectionRarity(db.pool, WIDE)).resolves.toEqual({ tokens: 150 })
    const { rows } = await db.pool.query<{
      traits: Array<{ trait_type: string; value_count: number; values: unknown[][] }>
    }>('SELECT traits FROM collection_rarity WHERE collection_address = $1', [WIDE])
    const byType = new Map(rows[0]!.traits.map((t) => [t.trait_type, t]))
    const blob = byType.get('Blob')!
    const bytes = blob.values.reduce((sum, [value]) => sum + Buffer.byteLength(JSON.stringify(value)), 0)
    expect(blob.value_count).toBe(150)
    expect(bytes).toBeLessThanOrEqual(100_000)
    expect(bytes).toBeGreaterThan(100_000 - 1_000)
    expect(byType.get('Hat')!.values).toEqual([
      ['Cap', 75],
      ['Crown', 75],
    ])
  })

  it('a collection whose computation fails waits behind the others, which go on', async () => {
    await countedTokens(
      BROKEN,
      3,
      `jsonb_build_array(jsonb_build_object('trait_type', 'Hat', 'value', 'Cap'))`,
    )
    await countedTokens(FINE, 3, `jsonb_build_array(jsonb_build_object('trait_type', 'Hat', 'value', 'Cap'))`)
    // The broken collection's change is the older one: the worker comes to it first.
    await db.pool.query(
      `UPDATE rarity_dirty SET since = now() - interval '1 hour' WHERE collection_address = $1`,
      [BROKEN],
    )
    // Its computation fails, as one whose stored answer the database refuses would.
    await db.pool.query(`
      CREATE FUNCTION refuse_broken() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.collection_address = '${BROKEN}' THEN RAISE EXCEPTION 'refused'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_broken BEFORE INSERT ON collection_rarity FOR EACH ROW EXECUTE FUNCTION refuse_broken();`)
    const computed = async (collection: string) =>
      (await db.pool.query('SELECT 1 FROM collection_rarity WHERE collection_address = $1', [collection]))
        .rowCount === 1
    const controller = new AbortController()
    const worker = runRarityWorker(
      { pool: db.pool, logger: pino({ level: 'silent' }), signal: controller.signal },
      { debounceMs: 0, pollMs: 50, restFactor: 0, failureBackoffMs: 60_000 },
    )
    try {
      const started = Date.now()
      while (!(await computed(FINE))) {
        expect(Date.now() - started, 'the other collection is computed').toBeLessThan(10_000)
        await new Promise((r) => setTimeout(r, 50))
      }
      const { rows } = await db.pool.query<{ ahead: boolean }>(
        `SELECT since > now() + interval '50 seconds' AS ahead FROM rarity_dirty WHERE collection_address = $1`,
        [BROKEN],
      )
      expect(rows, 'the failed collection keeps its mark, moved ahead by its backoff').toEqual([
        { ahead: true },
      ])
      // Once what failed is gone and its wait is over, it is computed like any other.
      await db.pool.query('DROP TRIGGER refuse_broken ON collection_rarity; DROP FUNCTION refuse_broken()')
      await db.pool.query(
        `UPDATE rarity_dirty SET since = now() - interval '1 second' WHERE collection_address = $1`,
        [BROKEN],
      )
      while (!(await computed(BROKEN))) {
        expect(Date.now() - started, 'the collection is computed once it can be').toBeLessThan(20_000)
        await new Promise((r) => setTimeout(r, 50))
      }
    } finally {
      controller.abort()
      await worker
    }
  })
})

let before1: unknown
const UNIQUE = [{ trait_type: 'Unique', value: 'only one' }]
beforeAll(async () => {
  const { rows } = await db.pool.query<{ attributes: unknown }>(
    'SELECT attributes FROM tokens WHERE collection_address = $1 AND token_id = 1',
    [NFT],
  )
  before1 = rows[0]!.attributes
})
