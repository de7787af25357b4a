import type { Hex } from 'viem'
import { IndexerError } from '../errors'
import { MAX_UINT256, type TransferEvent, ZERO_ADDRESS } from '../events/types'

/** Columns of a CSV header / keys of a JSONL object (batch_index optional). */
export const IMPORT_COLUMNS = [
  'collection_address',
  'token_id',
  'from_address',
  'to_address',
  'block_number',
  'block_timestamp',
  'transaction_hash',
  'log_index',
  'batch_index',
] as const

export type ImportRecord = Partial<Record<(typeof IMPORT_COLUMNS)[number], unknown>>

/** A line of an import file that cannot be imported: the message says why. */
export class RowError extends IndexerError {
  constructor(reason: string) {
    super(reason)
    this.name = 'RowError'
  }
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const TX_HASH = /^0x[0-9a-fA-F]{64}$/
const TOKEN_ID = /^[0-9]{1,78}$/

/**
 * Validates one imported record. Rows must lie before START_BLOCK (the
 * indexer owns START_BLOCK onwards) or carry block_number 0 (block unknown).
 */
export function toTransferEvent(record: ImportRecord, startBlock: bigint): TransferEvent {
  // An amount makes an ERC-1155 row, which the import does not take (docs/indexer.md, "Import").
  if ((record as Record<string, unknown>).amount !== undefined)
    throw new RowError('amount: ERC-1155 history cannot be imported, only ERC-721 transfers')
  const collection = address(record.collection_address, 'collection_address')
  if (collection === ZERO_ADDRESS) throw new RowError('collection_address is the zero address')
  const from = address(record.from_address, 'from_address')
  const to = address(record.to_address, 'to_address')
  if (from === ZERO_ADDRESS && to === ZERO_ADDRESS)
    throw new RowError('from_address and to_address are both zero')
  const tokenIdText = text(record.token_id, 'token_id')
  if (!TOKEN_ID.test(tokenIdText) || BigInt(tokenIdText) > MAX_UINT256) {
    throw new RowError('token_id must be a decimal integer from 0 to 2^256-1')
  }
  const blockNumber = BigInt(integer(record.block_number, 'block_number', Number.MAX_SAFE_INTEGER))
  if (blockNumber !== 0n && blockNumber >= startBlock) {
    throw new RowError(
      `block_number ${blockNumber} is not before START_BLOCK ${startBlock} (use 0 when unknown)`,
    )
  }
  const txHash = text(record.transaction_hash, 'transaction_hash')
  if (!TX_HASH.test(txHash)) throw new RowError('transaction_hash must be 0x and 64 hex digits')
  return {
    collection,
    tokenId: BigInt(tokenIdText),
    from,
    to,
    blockNumber,
    blockHash: null,
    blockTimestamp: timestamp(record.block_timestamp),
    transactionHash: txHash.toLowerCase() as Hex,
    logIndex: integer(record.log_index, 'log_index', 2 ** 31 - 1),
    batchIndex:
      record.batch_index === undefined || record.batch_index === ''
        ? 0
        : integer(record.batch_index, 'batch_index', 2 ** 31 - 1),
    standard: 'ERC721',
  }
}

function text(value: unknown, field: string): string {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) return String(value)
    throw new RowError(`${field} must be a JSON string: the number ${value} is not exact`)
  }
  if (value === undefined || value === '') throw new RowError(`${field} is missing`)
  if (typeof value !== 'string') throw new RowError(`${field} has the wrong type (a string is expected)`)
  if (value.trim() === '') throw new RowError(`${field} is missing`)
  return value.trim()
}

function address(value: unknown, field: string): Hex {
  const v = text(value, field)
  if (!ADDRESS.test(v)) throw new RowError(`${field} must be 0x and 40 hex digits`)
  return v.toLowerCase() as Hex
}

function integer(value: unknown, field: string, max: number): number {
  const v = text(value, field)
  if (!/^[0-9]+$/.test(v) || Number(v) > max)
    throw new RowError(`${field} must be an integer from 0 to ${max}`)
  return Number(v)
}

const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i

/**
 * RFC 3339 date-time, or Unix seconds. Whole seconds, like block timestamps, after the Unix
 * epoch and not after now (a block is never in the future; PostgreSQL cannot store a year past
 * 9999 or before 1; a time-ordered feed's cursor, `before_timestamp`, is at least 1, so a row at
 * the epoch itself could not be paged past). A date that does not exist (February 30th, hour 24)
 * is refused, not rolled over.
 */
function timestamp(value: unknown, now = Date.now()): bigint {
  const v = text(value, 'block_timestamp')
  let seconds: bigint
  if (/^[0-9]{1,12}$/.test(v)) seconds = BigInt(v)
  else {
    const m = RFC_3339.exec(v)
    const [year, month, day, hour, minute, second] = (m?.slice(1, 7) ?? []).map(Number)
    const fields = m && new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!))
    if (
      !fields ||
      fields.getUTCFullYear() !== year ||
      fields.getUTCMonth() !== month! - 1 ||
      fields.getUTCDate() !== day ||
      fields.getUTCHours() !== hour ||
      fields.getUTCMinutes() !== minute ||
      fields.getUTCSeconds() !== second
    )
      throw new RowError('block_timestamp must be RFC 3339 (2021-03-04T05:06:07Z) or Unix seconds')
    seconds = BigInt(Math.floor(Date.parse(v) / 1000))
  }
  if (seconds < 1n || seconds > BigInt(Math.floor(now / 1000)))
    throw new RowError('block_timestamp must lie after 1970-01-01T00:00:00Z and not after now')
  return seconds
}

/** Splits one CSV line (RFC 4180 quoting; no line breaks inside fields). */
export function splitCsvLine(line: string): string[] {
  const fields: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"'
        i++
      } else if (ch === '"') quoted = false
      else field += ch
    } else if (ch === '"' && field === '') quoted = true
    else if (ch === ',') {
      fields.push(field)
      field = ''
    } else field += ch
  }
  if (quoted) throw new RowError('unterminated quoted field')
  fields.push(field)
  return fields
}
