import { spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'

/**
 * The import streams in bounded memory (docs/indexer.md, "Historical import"): a 64 MiB heap
 * is plenty for a small file, and so it is for a file of many bad lines (their reasons are
 * reported as they come, the first 1,000 kept) and for one huge line (read in bounded pieces).
 */
let db: TestDatabase
const dir = mkdtempSync(path.join(os.tmpdir(), 'import-memory-'))
const ZERO = '0x0000000000000000000000000000000000000000'
const ALICE = '0x00000000000000000000000000000000000000a1'
const C = '0x000000000000000000000000000000000000b001'
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`
const HEADER =
  'collection_address,token_id,from_address,to_address,block_number,block_timestamp,transaction_hash,log_index'

function runCli(file: string) {
  const devNull = openSync('/dev/null', 'w')
  try {
    return spawnSync(path.resolve('node_modules/.bin/tsx'), ['src/indexer/import/cli.ts', '--', file], {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        START_BLOCK: '1000',
        NODE_OPTIONS: '--max-old-space-size=64',
      },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', devNull], // one stderr line per rejected row: not buffered here
      maxBuffer: 16 * 1024 * 1024,
    })
  } finally {
    closeSync(devNull)
  }
}

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

describe('the import under a 64 MiB heap', () => {
  it('control: a small valid file imports under a 64 MiB heap', { timeout: 120_000 }, () => {
    const file = path.join(dir, 'ok.csv')
    writeFileSync(file, [HEADER, `${C},1,${ZERO},${ALICE},10,2020-01-01T00:00:00Z,${tx(1)},0`].join('\n'))
    const result = runCli(file)
    expect(result.status).toBe(0)
  })

  it('1.5 million short bad lines (3 MB file) do not exhaust memory', { timeout: 300_000 }, () => {
    const file = path.join(dir, 'many-bad.csv')
    writeFileSync(file, `${HEADER}\n${'x\n'.repeat(1_500_000)}`)
    const result = runCli(file)
    expect({ status: result.status, signal: result.signal, stdout: result.stdout }).toMatchObject({
      status: 1,
      stdout: expect.stringContaining('1500000 lines rejected'),
    })
  })

  it('one 150 MB line is rejected by line number, not an out-of-memory crash', { timeout: 300_000 }, () => {
    const file = path.join(dir, 'huge-line.jsonl')
    const fd = openSync(file, 'w')
    writeSync(fd, '{"token_id":"')
    const block = '1'.repeat(1024 * 1024)
    for (let i = 0; i < 150; i++) writeSync(fd, block)
    writeSync(fd, '"}\n')
    closeSync(fd)
    const result = runCli(file)
    expect({ status: result.status, signal: result.signal }).toEqual({ status: 1, signal: null })
  })
})
