/**
 * The `standard` parameter (docs/api.md, "ERC-1155"). Absent, a request gets
 * the specification's ERC-721-only answer, byte for byte: a spec client never
 * receives a record it cannot read. Given, it names the standards served, and
 * every record carries the extension fields of both standards.
 */
import type { StandardFilter } from '@/db/queries/collections'
import type { StandardParam } from '@/lib/schemas'
import { ApiError } from '@/server/errors/api-error'

export interface Standards {
  filter: StandardFilter
  /** The parameter was given: records carry the extension fields (amount, balance, total_supply, …). */
  extended: boolean
}

export function standardsOf(param: StandardParam | undefined): Standards {
  return { filter: param ?? 'ERC721', extended: param !== undefined }
}

/** collections.standard ('ERC721', 'ERC721_LEGACY', 'ERC1155') as the API names it. */
export function apiStandard(stored: string | null | undefined): 'ERC721' | 'ERC1155' {
  return stored === 'ERC1155' ? 'ERC1155' : 'ERC721'
}

/**
 * A collection- or token-scoped read of a record whose standard the request
 * does not serve answers 404, and the message names the parameter that
 * serves it.
 */
export function assertStandardServed(
  standards: Standards,
  stored: string | null | undefined,
  what: string,
): void {
  const standard = apiStandard(stored)
  if (standards.filter === 'all' || standards.filter === standard) return
  throw new ApiError(
    'NOT_FOUND',
    standard === 'ERC1155'
      ? `${what} is ERC-1155: it is served with the query parameter standard=ERC1155 or standard=all.`
      : `${what} is ERC-721: standard=${standards.filter} leaves it out (use standard=ERC721 or standard=all).`,
  )
}
