/**
 * GET /v1/collections/{address}/traits (docs/api.md, "Traits"): the counts
 * come from src/db/queries/traits.ts, capped at TRAIT_LIMITS.
 */
import { selectCollectionTraits } from '@/db/queries/traits'
import type { StandardParam } from '@/lib/schemas'
import { assertNetwork, type ReadContext } from '@/server/api/read/context'
import { assertStandardServed, standardsOf } from '@/server/api/read/standard'
import { ApiError } from '@/server/errors/api-error'
import { type CollectionTraits, TRAIT_LIMITS } from './traits.schema'

export async function getCollectionTraits(
  ctx: ReadContext,
  input: {
    address: string
    network?: string | undefined
    standard?: StandardParam | undefined
    values_limit?: number | undefined
    trait_type?: string[] | undefined
  },
): Promise<CollectionTraits> {
  assertNetwork(ctx, input.network)
  const rows = await selectCollectionTraits(ctx.db, {
    address: input.address,
    maxTypes: TRAIT_LIMITS.types,
    maxValues: input.values_limit ?? TRAIT_LIMITS.valuesPerType,
    types: input.trait_type,
  })
  const first = rows[0]
  if (!first)
    throw new ApiError('NOT_FOUND', `No collection ${input.address} is indexed on ${ctx.config.NETWORK}.`)
  assertStandardServed(standardsOf(input.standard), first.standard, `Collection ${input.address}`)
  const tokens = Number(first.tokens)
  const types: CollectionTraits['trait_types'] = []
  for (const row of rows) {
    if (row.trait_type === null) continue
    let type = types.at(-1)
    if (type?.trait_type !== row.trait_type) {
      const withType = Number(row.type_count)
      type = {
        trait_type: row.trait_type,
        token_count: withType,
        missing_count: tokens - withType,
        value_count: Number(row.type_values),
        values: [],
        values_omitted: 0,
      }
      types.push(type)
    }
    if (row.value !== null) type.values.push({ value: row.value, token_count: Number(row.value_count) })
  }
  for (const type of types) type.values_omitted = type.value_count - type.values.length
  return {
    contract_address: input.address,
    network: ctx.config.NETWORK,
    token_count: tokens,
    trait_types: types,
    trait_types_omitted: Number(first.types) - types.length,
  }
}
