import { z } from 'zod'
import {
  address,
  checkedString,
  integerParam,
  networkParam,
  repeatableParam,
  standardParam,
} from '@/lib/schemas'
import { traitTypeProblem } from '@/lib/trait-param'

/**
 * How much one /traits answer holds (docs/api.md, "Traits"). The indexer stores this much of
 * each collection's answer (STORED_TRAIT_CAPS, src/indexer/store/rarity.ts): raise both together.
 */
export const TRAIT_LIMITS = { types: 100, valuesPerType: 1_000 } as const

const count = z.int().min(0)

export const traitValue = z
  .object({
    value: z
      .union([z.string(), z.number(), z.boolean()])
      .describe(
        'The value as the documents give it: a string, number or boolean. Compared as a JSON value: the number 1 and the string "1" are two values.',
      ),
    token_count: count.describe('Tokens with this value.'),
  })
  .meta({ id: 'TraitValue' })

export const traitType = z
  .object({
    trait_type: z.string(),
    token_count: count.describe('Tokens with this trait type (any value).'),
    missing_count: count.describe('Counted tokens without this trait type.'),
    value_count: count.describe('Distinct values of the type, including those left out of `values`.'),
    values: z
      .array(traitValue)
      .describe(
        `The values by token count, most first (ties by their JSON text, bytewise); at most ${TRAIT_LIMITS.valuesPerType.toLocaleString('en-US')}.`,
      ),
    values_omitted: count.describe('Values beyond the cap (or `values_limit`), not listed.'),
  })
  .meta({ id: 'TraitType' })

export const collectionTraits = z
  .object({
    contract_address: address,
    network: z.string(),
    token_count: count.describe(
      "Tokens counted: the collection's tokens that are not burned and whose metadata was fetched (metadata_status ok).",
    ),
    trait_types: z
      .array(traitType)
      .describe(
        `Trait types by token count, most first (ties by name, bytewise); at most ${TRAIT_LIMITS.types}.`,
      ),
    trait_types_omitted: count.describe(
      'Trait types not listed: beyond the cap, or (with `trait_type`) not asked for.',
    ),
  })
  .meta({
    id: 'CollectionTraits',
    example: {
      contract_address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      network: 'devnet',
      token_count: 1000,
      trait_types: [
        {
          trait_type: 'Background',
          token_count: 990,
          missing_count: 10,
          value_count: 2,
          values: [
            { value: 'Blue', token_count: 600 },
            { value: 'Red', token_count: 390 },
          ],
          values_omitted: 0,
        },
      ],
      trait_types_omitted: 0,
    },
  })

export type CollectionTraits = z.infer<typeof collectionTraits>

export const getCollectionTraitsInput = z.strictObject({
  address: address.describe('Contract address, lowercase.'),
  network: networkParam,
  standard: standardParam,
  values_limit: integerParam(0, TRAIT_LIMITS.valuesPerType, TRAIT_LIMITS.valuesPerType)
    .describe(
      `Extension: at most this many values of each trait type, 0 to ${TRAIT_LIMITS.valuesPerType.toLocaleString('en-US')}; default ${TRAIT_LIMITS.valuesPerType.toLocaleString('en-US')}. The counts stay whole (\`value_count\`, \`values_omitted\`): 0 lists the types alone.`,
    )
    .optional(),
  trait_type: repeatableParam(
    z
      .array(checkedString(traitTypeProblem))
      .min(1)
      .refine(
        (list) => new Set(list).size <= TRAIT_LIMITS.types,
        `at most ${TRAIT_LIMITS.types} distinct trait types`,
      ),
  )
    .meta({
      description: `Extension: only these trait types (matched exactly, a colon included). Repeatable, 1 to ${TRAIT_LIMITS.types} distinct types; a type the collection's tokens do not have is left out, and \`trait_types_omitted\` counts the types not listed. The order stays by token count.`,
    })
    .optional(),
})

export const getCollectionTraitsOutput = z.object({ data: collectionTraits })
