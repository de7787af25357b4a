/**
 * npm run import:transfers -- <file.csv|file.jsonl>
 * Imports transfer history before START_BLOCK (format: docs/indexer.md).
 * Exit codes: 0 every line imported (or already present), 1 some lines
 * rejected (the valid ones are imported), 2 usage, configuration or I/O error.
 */
import { existsSync } from 'node:fs'
import { loadConfig } from '@/config/env'
import { createPool } from '@/db/pool'
import { describeError } from '../errors'
import { importTransfersFile } from './import'

const file = process.argv.slice(2).find((a) => a !== '--')
if (!file) {
  process.stderr.write('usage: npm run import:transfers -- <file.csv|file.jsonl>\n')
  process.exit(2)
}
if (!existsSync(file)) {
  process.stderr.write(`import: no such file: ${file}\n`)
  process.exit(2)
}
const config = loadConfig()
if (!config.DATABASE_URL) {
  process.stderr.write('Invalid configuration: DATABASE_URL is required by the import\n')
  process.exit(2)
}
const pool = createPool(config.DATABASE_URL, { max: 2 })
try {
  const report = await importTransfersFile(pool, file, {
    startBlock: BigInt(config.START_BLOCK),
    onRejected: (line, reason) => process.stderr.write(`line ${line}: ${reason}\n`),
  })
  process.stdout.write(
    `import: ${report.lines} rows read, ${report.inserted} transfers imported, ${report.duplicates} already present, ${report.rejectedLines} lines rejected\n`,
  )
  await pool.end()
  process.exit(report.rejectedLines > 0 ? 1 : 0)
} catch (err) {
  process.stderr.write(`import failed: ${describeError(err)}\n`)
  await pool.end().catch(() => undefined)
  process.exit(2)
}
