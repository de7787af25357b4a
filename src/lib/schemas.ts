/**
 * Zod primitives shared by the API procedures, the portal's try-it form and
 * the indexer's import: one definition of what a valid address, token id or
 * cursor looks like.
 */
import { z } from 'zod'

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** Lowercase EVM address, as the specification writes it. */
export const address = z.string().regex(/^0x[0-9a-f]{40}$/, 'must be a lowercase 0x-prefixed 40-hex-digit address')

/** Decimal token id of at most 78 digits (any uint256). */
export const tokenId = z.string().regex(/^[0-9]{1,78}$/, 'must be a decimal string of 1 to 78 digits')

/** Decimal string for block numbers and counters that can exceed 2^53. */
export const decimalString = z.string().regex(/^[0-9]+$/)

export const isoDateTime = z.string().describe('RFC 3339 timestamp, UTC')

export const coverageStatus = z.enum(['unknown', 'partial', 'complete'])
