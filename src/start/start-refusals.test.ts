/**
 * `npm start` refusing a bad configuration or an unusable dependency with one line, no stack
 * trace (src/start/main.ts: "a bad value, an unusable DATA_DIR or a taken port stops here, one
 * line, exit code 2"; src/config/env.ts: "A bad value stops the process with one line naming
 * the variable"; docs/operations.md, "Start-up refusals"):
 *  - DATA_DIR that cannot be created: one line naming DATA_DIR and the error code, exit 2;
 *  - DATABASE_URL that nobody answers: one fatal line naming DATABASE_URL, its host and port
 *    and the error, never its password;
 *  - AUTH_SECRET missing beside DATABASE_URL: refused before the embedded devnet is started.
 * Taken ports: ./port-taken.test.ts.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '@/test/free-port'
import { npmStart } from '@/test/npm-start'

const STACK = /\n\s+at .+\(?[/:]/

describe('npm start refusing what it cannot use', () => {
  const cleanups: (() => void)[] = []
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup()
  })

  function tempDir(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'nft-start-refusals-'))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    return dir
  }

  function baseEnv(): Record<string, string | undefined> {
    const { RPC_URL: _rpc, NODE_ENV: _mode, DATABASE_URL: _db, ...inherited } = process.env
    return { ...inherited, LOG_LEVEL: 'info' }
  }

  it('DATA_DIR that cannot be created: one line naming DATA_DIR and exit code 2, no stack trace', async () => {
    const dir = tempDir()
    const file = path.join(dir, 'a-file')
    writeFileSync(file, 'not a directory')
    const { code, output } = await npmStart(
      { ...baseEnv(), PORT: String(await freePort()), DATA_DIR: path.join(file, 'data') },
      60_000,
    )
    expect(output, 'names the variable').toMatch(/\bDATA_DIR\b/)
    expect(output).toContain(`DATA_DIR ${path.join(file, 'data')} cannot be used: ENOTDIR`)
    expect(output, 'no stack trace').not.toMatch(STACK)
    expect(code, output).toBe(2)
  }, 90_000)

  it('DATABASE_URL nobody answers: one line naming DATABASE_URL (never its password), no stack trace', async () => {
    const dir = tempDir()
    const dbPort = await freePort()
    const { code, output } = await npmStart(
      {
        ...baseEnv(),
        PORT: String(await freePort()),
        DATA_DIR: dir,
        DATABASE_URL: `postgres://nft:pw-s3cret-9931@127.0.0.1:${dbPort}/nft`,
        // Not contacted before the database: keeps the devnet out of this test.
        RPC_URL: `http://127.0.0.1:${await freePort()}`,
        AUTH_SECRET: 'x'.repeat(32),
      },
      60_000,
    )
    expect(code, output).not.toBe(0)
    expect(output).not.toContain('pw-s3cret-9931')
    const fatal = output.split('\n').filter((line) => line.includes('"level":60'))
    expect(fatal, output).toHaveLength(1)
    expect(fatal[0], 'names the variable').toMatch(/\bDATABASE_URL\b/)
    expect(fatal[0], 'host and port, and why').toContain(`127.0.0.1:${dbPort}`)
    expect(fatal[0]).toContain('ECONNREFUSED')
    expect(output, 'no stack trace').not.toMatch(/"stack":|\\n\s+at /)
  }, 90_000)

  it('AUTH_SECRET missing beside DATABASE_URL is refused before anything is started', async () => {
    const dir = tempDir()
    const { code, output } = await npmStart(
      {
        ...baseEnv(),
        PORT: String(await freePort()),
        DATA_DIR: dir,
        // Refused before the database is used: any URL does.
        DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`,
      },
      90_000,
    )
    expect(code, output).toBe(2)
    expect(output).toMatch(/AUTH_SECRET is required when DATABASE_URL is set/)
    // A configuration refusal starts nothing: no devnet, no chain written into DATA_DIR.
    expect(output).not.toMatch(/devnet ready|devnet collections deployed/)
    expect(existsSync(path.join(dir, 'devnet')), 'DATA_DIR/devnet was created').toBe(false)
  }, 120_000)
})
