import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import type pg from 'pg'
import type { TransferEvent } from '../events/types'
import { writeTransfers } from '../store'
import { IMPORT_COLUMNS, type ImportRecord, RowError, splitCsvLine, toTransferEvent } from './parse'

export interface ImportReport {
  lines: number
  inserted: number
  duplicates: number
  rejected: Array<{ line: number; reason: string }>
}

const CHUNK = 5_000

/**
 * Imports transfer history (CSV or JSONL, by extension) for blocks before
 * START_BLOCK. Each chunk of rows commits in one transaction together with
 * the derived state it changes, rebuilt from the full history of the touched
 * tokens, so rows older than stored ones land correctly. Re-running the same
 * file inserts nothing twice (identity: transaction_hash, log_index, batch_index).
 */
export async function importTransfersFile(
  pool: pg.Pool,
  file: string,
  options: { startBlock: bigint; onRejected?: (line: number, reason: string) => void },
): Promise<ImportReport> {
  const report: ImportReport = { lines: 0, inserted: 0, duplicates: 0, rejected: [] }
  const jsonl = /\.(jsonl|ndjson)$/i.test(file)
  let header: string[] | null = null
  let chunk: TransferEvent[] = []
  const lines = createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  })
  let lineNumber = 0
  for await (const raw of lines) {
    lineNumber++
    const line = lineNumber === 1 ? raw.replace(/^\uFEFF/, '') : raw
    if (line.trim() === '') continue
    try {
      if (!jsonl && header === null) {
        header = parseHeader(line)
        continue
      }
      report.lines++
      const record = jsonl ? parseJsonLine(line) : csvRecord(header!, line)
      chunk.push(toTransferEvent(record, options.startBlock))
    } catch (err) {
      if (!(err instanceof RowError)) throw err
      if (header === null && !jsonl) throw err
      report.rejected.push({ line: lineNumber, reason: err.message })
      options.onRejected?.(lineNumber, err.message)
    }
    if (chunk.length >= CHUNK) {
      await importChunk(pool, chunk, report)
      chunk = []
    }
  }
  if (chunk.length > 0) await importChunk(pool, chunk, report)
  return report
}

async function importChunk(pool: pg.Pool, events: TransferEvent[], report: ImportReport) {
  const { inserted } = await writeTransfers(pool, events, { source: 'import' })
  report.inserted += inserted
  report.duplicates += events.length - inserted
}

function parseHeader(line: string): string[] {
  const names = splitCsvLine(line).map((h) => h.trim().toLowerCase())
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
