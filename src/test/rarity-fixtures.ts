/**
 * For API tests: a collection's stored ranking and trait counts, computed as
 * the indexer's rarity worker computes them (docs/database.md, "Stored rarity").
 */
import type pg from 'pg'
import { recomputeCollectionRarity } from '@/indexer/store/rarity'

export async function computeRarity(pool: pg.Pool, collection: string): Promise<void> {
  await recomputeCollectionRarity(pool, collection)
}
