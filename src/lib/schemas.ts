/**
 * Zod primitives shared by the API procedures, the portal's try-it form and
 * the indexer's import: one definition of what a valid address, token id or
 * cursor looks like.
 */
import { z } from 'zod'

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** Lowercase EVM address, as the specification writes it. */
export const address = z
  .string()
  .regex(/^0x[0-9a-f]{40}$/, 'must be a lowercase 0x-prefixed 40-hex-digit address')

/** Decimal token id of at most 78 digits (any uint256). */
export const tokenId = z.string().regex(/^[0-9]{1,78}$/, 'must be a decimal string of 1 to 78 digits')

/**
 * A holder's balance as a cursor carries it: a sum of uint256 values, so up to 155 digits
 * (what the database keeps: docs/database.md, "ERC-1155").
 */
export const balanceString = z.string().regex(/^[0-9]{1,155}$/, 'must be a decimal string of 1 to 155 digits')

/** Decimal string for block numbers and counters that can exceed 2^53. */
export const decimalString = z.string().regex(/^[0-9]+$/)

/** A signed decimal string: a net count that history before the indexed window can take below zero. */
export const signedDecimalString = z.string().regex(/^-?[0-9]+$/)

export const isoDateTime = z.string().meta({ format: 'date-time', description: 'RFC 3339 timestamp, UTC' })

export const coverageStatus = z.enum(['unknown', 'partial', 'complete'])
export type CoverageStatus = z.infer<typeof coverageStatus>

export const transferEventType = z.enum(['mint', 'transfer', 'burn'])

/** 32-byte hash, lowercase hex with 0x. */
export const txHash = z.string().regex(/^0x[0-9a-f]{64}$/)

// ───────────────────────── query parameters ─────────────────────────
//
// Query strings arrive as strings. trpc-to-openapi would coerce numbers and
// booleans with Number()/Boolean(), which accepts "1e3", "0x10", " 7 " and
// turns "false" into true. These parsers accept exactly the written forms
// (decimal digits; "true"/"false") and leave anything else to fail
// validation with a 400, while the OpenAPI document still shows the plain
// integer/boolean type.

/**
 * An integer query parameter: decimal digits only, within [min, max]. A
 * `defaultValue` is documented only (the OpenAPI `default`): the handler
 * applies it. It sits on the inner schema, where the JSON Schema conversion
 * of a preprocess keeps it.
 */
export function integerParam(min: number, max: number = Number.MAX_SAFE_INTEGER, defaultValue?: number) {
  const int = z
    .int({ error: 'must be an integer' })
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
  return z.preprocess(
    // A negative value is converted, to be refused by its minimum; `-0` is not (it would pass a minimum of 0).
    (value) =>
      typeof value === 'string' && /^-?[0-9]{1,20}$/.test(value) && !/^-0+$/.test(value)
        ? Number(value)
        : value,
    defaultValue === undefined ? int : int.meta({ default: defaultValue }),
  )
}

/** A string parameter `problem` accepts; what it says of one it refuses is the 400's message. */
export function checkedString(problem: (value: string) => string | undefined) {
  return z.string().superRefine((value, ctx) => {
    const message = problem(value)
    if (message) ctx.addIssue({ code: 'custom', message })
  })
}

/** A repeatable query parameter (`list` an array schema): one arrives as a string, several as an array. */
export function repeatableParam<List extends z.ZodType>(list: List) {
  return z.preprocess((value) => (typeof value === 'string' ? [value] : value), list)
}

/** A boolean query parameter: exactly "true" or "false"; absent reads as false (documented as the default). */
export function booleanParam() {
  return z.preprocess(
    (value) => (value === 'true' ? true : value === 'false' ? false : value),
    z.boolean({ error: 'must be true or false' }).meta({ default: false }),
  )
}

export const PAGE_LIMIT_DEFAULT = 20
export const PAGE_LIMIT_MAX = 100

export const limitParam = integerParam(1, PAGE_LIMIT_MAX, PAGE_LIMIT_DEFAULT)
  .describe(`Page size, 1 to ${PAGE_LIMIT_MAX}; default ${PAGE_LIMIT_DEFAULT}.`)
  .optional()

export const networkParam = z
  .string()
  .max(64)

  .describe('The indexed network (the only accepted value, and the default).')
  .optional()

export const beforeTimestampParam = integerParam(1)

  .describe(
    'Cursor: Unix microseconds, copied from `next_page_params`; must be sent together with `before_id`.',
  )
  .optional()

export const beforeIdParam = integerParam(1)

  .describe('Cursor: row id, copied from `next_page_params`; must be sent together with `before_timestamp`.')
  .optional()

export const afterTokenIdParam = tokenId

  .describe('Cursor: token id, copied from `next_page_params`; must be sent together with `after_id`.')
  .optional()

export const afterIdParam = integerParam(1)

  .describe('Cursor: row id, copied from `next_page_params`; must be sent together with `after_token_id`.')
  .optional()

/**
 * Token standards of a request (docs/api.md, "ERC-1155"). Absent: the
 * specification's ERC-721-only answers, unchanged. Given: records of the
 * standards named, with the extension fields of both standards.
 */
export const STANDARDS = ['ERC721', 'ERC1155', 'all'] as const
export type StandardParam = (typeof STANDARDS)[number]

export const standardParam = z
  .enum(STANDARDS)
  .meta({
    description:
      'Extension: which token standards to serve — `ERC721`, `ERC1155` or `all`. Absent: ERC-721 only, exactly as the specification describes (ERC-1155 collections, tokens and transfers are left out, and an ERC-1155 collection or token answers 404). Given: records of the standards named, with the extension fields `amount` (transfers), `balance` (holdings), `total_supply`, `holder_count` and `contract_type` (NFTs).',
  })
  .optional()

export const afterCollectionParam = address

  .describe(
    'Cursor: collection address, copied from `next_page_params`; required together with `after_token_id` and `after_id`.',
  )
  .optional()

// token_count is a 32-bit integer in the database: a larger cursor names no holder.
export const afterTokenCountParam = integerParam(1, 2_147_483_647)

/**
 * The cursor parameters a list takes together (its next_page_params): one
 * table for the procedures' inputs and the try page's form.
 */
export const CURSOR_GROUPS = {
  time: ['before_timestamp', 'before_id'],
  token: ['after_token_id', 'after_id'],
  ownerToken: ['after_collection', 'after_token_id', 'after_id'],
  holder: ['after_balance', 'after_owner'],
  collectionOwner: ['after_token_count', 'after_owner'],
} as const satisfies Record<string, readonly string[]>

/**
 * Cursor parameters that only make sense together: all present or all
 * absent. Used in a superRefine of the input object.
 */
export function requireTogether(
  value: Record<string, unknown>,
  names: readonly string[],
  ctx: z.RefinementCtx,
): void {
  const present = names.filter((n) => value[n] !== undefined)
  if (present.length === 0 || present.length === names.length) return
  const missing = names.filter((n) => value[n] === undefined)
  ctx.addIssue({
    code: 'custom',
    path: [missing[0]!],
    message: `must be sent together with ${present.map((n) => `'${n}'`).join(' and ')} (copy every key of next_page_params)`,
  })
}

// ───────────────────────── page envelope ─────────────────────────

export const coverage = z
  .object({
    status: coverageStatus.describe(
      '`complete`: the documented window is covered; `partial`: results are incomplete; `unknown`: no claim is made.',
    ),
    start_block: decimalString.nullable().describe('First block covered, when known.'),
  })
  .meta({ id: 'Coverage', example: { status: 'complete', start_block: '0' } })

export type Coverage = z.infer<typeof coverage>

/** Cursor of the newest-first feeds (collections, activity, transfer lists). */
export const timeCursor = z
  .object({ before_timestamp: z.int().min(1), before_id: z.int().min(1) })
  .meta({ id: 'TimeCursor', example: { before_timestamp: 1767323045000000, before_id: 4182 } })
export type TimeCursor = z.infer<typeof timeCursor>

/** Cursor of a collection's token listing. */
export const tokenCursor = z
  .object({ after_token_id: tokenId, after_id: z.int().min(1) })
  .meta({ id: 'TokenCursor', example: { after_token_id: '1041', after_id: 1107 } })

/**
 * A block number as `at_block` takes it (docs/api.md, "Snapshots"): decimal
 * digits without leading zeros, at most 2^63 - 1 (PostgreSQL's bigint).
 */
export const blockNumber = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,18})$/, 'must be a decimal block number (digits only, no leading zeros)')
  // Only digits reach BigInt: a value the regex refused is named by its message alone.
  .refine(
    (value) => !/^[0-9]+$/.test(value) || BigInt(value) < 2n ** 63n,
    'must be at most 9223372036854775807',
  )

export const atBlockParam = blockNumber
  .meta({
    description:
      "Extension: the state after this block was applied (a snapshot; decimal block number). Served for confirmed blocks (at most the indexer's confirmed block, `X-Confirmed-Block`) inside the coverage window while coverage is complete; otherwise 400 naming the blocks served. Metadata fields are today's. Pages of a snapshot carry `at_block` in `next_page_params`.",
  })
  .optional()

/** Cursor of an owner's holdings. */
export const ownerCursor = z
  .object({
    after_collection: address,
    after_token_id: tokenId,
    after_id: z.int().min(1),
    at_block: blockNumber
      .describe('Extension: present on the pages of a snapshot (`at_block`): keeps the cursor on its block.')
      .optional(),
  })
  .meta({
    id: 'OwnerCursor',
    example: {
      after_collection: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      after_token_id: '17',
      after_id: 311,
    },
  })

/** Cursor of a token's holders (GET /v1/nfts/{address}/{tokenId}/owners): balance descending, then owner. */
export const holderCursor = z.object({ after_balance: balanceString, after_owner: address }).meta({
  id: 'HolderCursor',
  example: { after_balance: '12', after_owner: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' },
})

/** Cursor of a collection's holders (GET /v1/collections/{address}/owners): token count descending, then owner. */
export const collectionOwnerCursor = z
  .object({
    after_token_count: z.int().min(1),
    after_owner: address,
    at_block: blockNumber
      .describe('Present on the pages of a snapshot (`at_block`): keeps the cursor on its block.')
      .optional(),
  })
  .meta({
    id: 'CollectionOwnerCursor',
    example: { after_token_count: 3, after_owner: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' },
  })

/** Cursor of a wallet's collections (GET /v1/owners/{address}/collections). */
export const ownerCollectionCursor = z.object({ after_collection: address }).meta({
  id: 'OwnerCollectionCursor',
  example: { after_collection: '0x5fbdb2315678afecb367f032d93f642f64180aa3' },
})

/** The page envelope of every list response. */
export function pageOf<Item extends z.ZodType, Cursor extends z.ZodType>(item: Item, cursor: Cursor) {
  return z.object({
    data: z.array(item),
    pagination: z.object({
      limit: z.int().min(1).max(PAGE_LIMIT_MAX).describe('The page size used.'),
      has_more: z.boolean(),
      next_page_params: cursor

        .describe(
          'Present only when has_more is true: copy every key and value into the next request, keeping the other filters. Opaque; valid only on this endpoint.',
        )
        .optional(),
    }),
    coverage,
  })
}

/** A page of `Item`s with a `Cursor` to the next one: the type of what pageOf validates. */
export type Page<Item, Cursor> = z.infer<ReturnType<typeof pageOf<z.ZodType<Item>, z.ZodType<Cursor>>>>
