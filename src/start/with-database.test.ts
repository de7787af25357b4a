/**
 * `npm run db:migrate` and `npm run import:transfers` on the embedded default
 * (no DATABASE_URL), as the README lists them: with no service running they
 * start the embedded database in DATA_DIR/pg for the command and stop it
 * after; with one running (here: this test holding the server) they use its
 * server instead of opening the files a second time.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { startEmbeddedPostgres } from '@/dev/postgres'

const ROOT = path.resolve(import.meta.dirname, '../..')
const COLL = '0x00000000000000000000000000000000000000c0'
const ALICE = '0x00000000000000000000000000000000000000a1'
const BOB = '0x00000000000000000000000000000000000000b2'
const ZERO = '0x0000000000000000000000000000000000000000'
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}`
const HEADER =
  'collection_address,token_id,from_address,to_address,block_number,block_timestamp,transaction_hash,log_index'

const dataDir = mkdtempSync(path.join(tmpdir(), 'nft-tools-'))

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/**
 * `npm run <script> -- args` in a user's shell without DATABASE_URL. Asynchronous: the
 * embedded server of the second part runs in this process and must keep answering.
 */
function npmRun(script: string, ...args: string[]): Promise<{ code: number | null; output: string }> {
  const { DATABASE_URL: _db, RPC_URL: _rpc, ...inherited } = process.env
  const child = spawn('npm', ['run', '--silent', script, '--', ...args], {
    cwd: ROOT,
    env: { ...inherited, DATA_DIR: dataDir, START_BLOCK: '1000', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })))
}

function csvFile(name: string, rows: string[]): string {
  const file = path.join(dataDir, name)
  writeFileSync(file, [HEADER, ...rows].join('\n'))
  return file
}

async function transferCount(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM transfers')).rows[0]!.n
  } finally {
    await client.end()
  }
}

describe('database tools on the embedded default', () => {
  it('migrate and import with no service running, then through a running one', async () => {
    const migrated = await npmRun('db:migrate')
    expect(migrated.code, migrated.output).toBe(0)
    expect(migrated.output).toContain('embedded PostgreSQL (PGlite) started for this command')
    expect(migrated.output).toContain('applied migration')

    const first = csvFile('first.csv', [
      `${COLL},1,${ZERO},${ALICE},10,2020-01-01T00:00:00Z,${tx(1)},0`,
      `${COLL},1,${ALICE},${BOB},20,2020-01-02T00:00:00Z,${tx(2)},0`,
    ])
    const imported = await npmRun('import:transfers', first)
    expect(imported.code, imported.output).toBe(0)
    expect(imported.output).toContain('2 transfers imported')

    // Both commands stopped their server: the directory is free, and holds what they wrote.
    const server = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg') })
    try {
      expect(await transferCount(server.url)).toBe(2)

      // A running service's server (this one): the tools use it, they do not open the files.
      const upToDate = await npmRun('db:migrate')
      expect(upToDate.code, upToDate.output).toBe(0)
      expect(upToDate.output).toContain('using the embedded database of the running service')
      expect(upToDate.output).toContain('database schema is up to date')

      const second = csvFile('second.csv', [`${COLL},2,${ZERO},${BOB},30,2020-01-03T00:00:00Z,${tx(3)},0`])
      const again = await npmRun('import:transfers', second)
      expect(again.code, again.output).toBe(0)
      expect(again.output).toContain('using the embedded database of the running service')
      expect(again.output).toContain('1 transfers imported')
      expect(await transferCount(server.url)).toBe(3)
    } finally {
      await server.stop()
    }
  }, 300_000)

  it('a DATABASE_URL that is set is used as it is', () => {
    const { RPC_URL: _rpc, ...inherited } = process.env
    const result = spawnSync('npm', ['run', '--silent', 'db:migrate'], {
      cwd: ROOT,
      // Nothing listens there: the tool reports it, and no embedded server starts.
      env: { ...inherited, DATA_DIR: dataDir, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(result.status).toBe(1)
    expect(`${result.stdout}${result.stderr}`).toMatch(/db:migrate: .*ECONNREFUSED/)
    expect(`${result.stdout}${result.stderr}`).not.toContain('embedded PostgreSQL')
  }, 120_000)
})
