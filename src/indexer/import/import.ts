import { createReadStream } from 'node:fs'
import type pg from 'pg'
import type { TransferEvent } from '../events/types'
import { writeTransfers } from '../store'
import { collectionsOfStandard } from '../store/collections'
import {
  earliestIndexedTimestamp,
  eventIdentity,
  storedTransferKeysByIdentity,
  transferKey,
} from '../store/transfers'
import { IMPORT_COLUMNS, type ImportRecord, RowError, splitCsvLine, toTransferEvent } from './parse'

export interface ImportReport {
  lines: number
  inserted: number
  duplicates: number
  /** Lines rejected in all. */
  rejectedLines: number
  /** The first MAX_REPORTED of them, with the reason (onRejected hears of every one). */
  rejected: Array<{ line: number; reason: string }>
}

const CHUNK = 5_000
const MAX_REPORTED = 1_000
/** Longest line read (characters); a longer one is rejected by its number, unread. */
export const MAX_LINE_LENGTH = 64 * 1024

/**
 * Imports transfer history (CSV or JSONL, by extension) for blocks before
 * START_BLOCK. Each chunk of rows commits in one transaction together with
 * the derived state it changes, rebuilt from the full history of the touched
 * tokens, so rows older than stored ones land correctly. Re-running the same
 * file inserts nothing twice (identity: transaction_hash, log_index, batch_index).
 * A row is rejected, by its line, when it does not parse, when it says something else
 * than a stored row of the same identity (or than an earlier row of the file), when its
 * collection is indexed as ERC-1155, and when it is dated after the first indexed transfer:
 * history from before START_BLOCK is older than every indexed block, and a newer date
 * would put it after them in chain order (docs/indexer.md, "Historical import").
 */
export async function importTransfersFile(
  pool: pg.Pool,
  file: string,
  options: { startBlock: bigint; onRejected?: (line: number, reason: string) => void },
): Promise<ImportReport> {
  const report: ImportReport = { lines: 0, inserted: 0, duplicates: 0, rejectedLines: 0, rejected: [] }
  const reject = (line: number, reason: string) => {
    report.rejectedLines++
    if (report.rejected.length < MAX_REPORTED) report.rejected.push({ line, reason })
    options.onRejected?.(line, reason)
  }
  const firstIndexed = await earliestIndexedTimestamp(pool)
  const jsonl = /\.(jsonl|ndjson)$/i.test(file)
  let header: string[] | null = null
  let chunk: Array<{ line: number; event: TransferEvent }> = []
  let lineNumber = 0
  for await (const raw of boundedLines(createReadStream(file, 'utf8'), MAX_LINE_LENGTH)) {
    lineNumber++
    if (raw === null) {
      reject(lineNumber, `longer than ${MAX_LINE_LENGTH} characters`)
      continue
    }
    const line = lineNumber === 1 ? raw.replace(/^\uFEFF/, '') : raw
    if (line.trim() === '') continue
    try {
      if (!jsonl && header === null) {
        header = parseHeader(line)
        continue
      }
      report.lines++
      const record = jsonl ? parseJsonLine(line) : csvRecord(header!, line)
      const event = toTransferEvent(record, options.startBlock)
      if (firstIndexed !== null && event.blockTimestamp > firstIndexed)
        throw new RowError(
          `block_timestamp is after the first indexed transfer's (${new Date(Number(firstIndexed) * 1000).toISOString()}): history before START_BLOCK is older`,
        )
      chunk.push({ line: lineNumber, event })
    } catch (err) {
      if (!(err instanceof RowError)) throw err
      if (header === null && !jsonl) throw err
      reject(lineNumber, err.message)
    }
    if (chunk.length >= CHUNK) {
      await importChunk(pool, chunk, report, reject)
      chunk = []
    }
  }
  if (chunk.length > 0) await importChunk(pool, chunk, report, reject)
  return report
}

async function importChunk(
  pool: pg.Pool,
  rows: Array<{ line: number; event: TransferEvent }>,
  report: ImportReport,
  reject: (line: number, reason: string) => void,
) {
  const events = rows.map((r) => r.event)
  const [stored, multi] = await Promise.all([
    storedTransferKeysByIdentity(pool, events),
    collectionsOfStandard(pool, [...new Set(events.map((e) => e.collection))], 'ERC1155'),
  ])
  const accepted: TransferEvent[] = []
  for (const { line, event } of rows) {
    const identity = eventIdentity(event)
    const known = stored.get(identity)
    if (multi.has(event.collection)) reject(line, `collection ${event.collection} is indexed as ERC-1155`)
    else if (known === undefined) {
      stored.set(identity, transferKey(event))
      accepted.push(event)
    } else if (known === transferKey(event)) report.duplicates++
    else
      reject(
        line,
        `conflicts with the stored (or an earlier) transfer of the same transaction_hash, log_index and batch_index`,
      )
  }
  const { inserted } = await writeTransfers(pool, accepted, { source: 'import' })
  report.inserted += inserted
  report.duplicates += accepted.length - inserted
}

/**
 * The lines of a text stream (LF or CRLF), each at most `max` characters; a longer one comes
 * as null, its text dropped as it streams by, so one huge line holds no more memory than
 * `max`. Written here: readline holds a whole line before anyone sees it, and a splitter
 * that skips long lines (split2's skipOverflow) would lose their line numbers.
 */
export async function* boundedLines(
  input: AsyncIterable<string>,
  max: number,
): AsyncGenerator<string | null> {
  let line = ''
  let tooLong = false
  for await (const chunk of input) {
    let start = 0
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      const piece = chunk.slice(start, end)
      start = end + 1
      const whole = tooLong || line.length + piece.length > max + 1 ? null : line + piece
      line = ''
      tooLong = false
      yield whole === null ? null : whole.replace(/\r$/, '')
    }
    const rest = chunk.slice(start)
    if (tooLong || line.length + rest.length > max + 1) {
      tooLong = true
      line = ''
    } else line += rest
  }
  if (tooLong) yield null
  else if (line !== '') yield line.replace(/\r$/, '')
}

function parseHeader(line: string): string[] {
  const names = splitCsvLine(line).map((h) => h.trim().toLowerCase())
  const repeated = names.filter((name, i) => name !== '' && names.indexOf(name) !== i)
  if (repeated.length > 0) throw new RowError(`CSV header names ${[...new Set(repeated)].join(', ')} twice`)
  const missing = IMPORT_COLUMNS.filter((c) => c !== 'batch_index' && !names.includes(c))
  if (missing.length > 0) throw new RowError(`CSV header lacks ${missing.join(', ')}`)
  return names
}

function csvRecord(header: string[], line: string): ImportRecord {
  const fields = splitCsvLine(line)
  if (fields.length !== header.length)
    throw new RowError(`expected ${header.length} fields, found ${fields.length}`)
  return Object.fromEntries(header.map((name, i) => [name, fields[i]]))
}

function parseJsonLine(line: string): ImportRecord {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    throw new RowError('not valid JSON')
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new RowError('not a JSON object')
  return value as ImportRecord
}
