/**
 * The embedded mode's generated AUTH_SECRET (src/start/auth-secret.ts), DATA_DIR/auth-secret.
 *
 * A file left empty or cut short (a crash or a full disk while an older version wrote it
 * with a plain writeFileSync) must never be handed on as the secret: empty, it reached the
 * children as AUTH_SECRET='' (unset: the portal's sign-in threw, webhook delivery was off);
 * cut short, every child exited 2 with "AUTH_SECRET must be at least 32 characters", a
 * variable the operator never set. Such a secret never worked, so no session depends on it:
 * a new one replaces it, with a warning naming the file. Writes are atomic.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseConfig } from '@/config/env'
import { AuthSecretFileError, ensureAuthSecret } from './auth-secret'

describe('the generated AUTH_SECRET file', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  function dataDir(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'nft-auth-secret-'))
    dirs.push(dir)
    return dir
  }

  it.each([
    ['empty (crash or full disk right after creating it)', ''],
    ['cut short', 'Ab3dE\n'],
  ])('%s: never handed to the processes as a secret the configuration refuses', (_what, content) => {
    const dir = dataDir()
    const file = path.join(dir, 'auth-secret')
    writeFileSync(file, content)
    const config = parseConfig({}) // embedded database: no DATABASE_URL
    const warnings: string[] = []
    const secret = ensureAuthSecret(config, dir, (message) => warnings.push(message))
    // What the web process and the indexer then parse (src/start/main.ts: childEnv.AUTH_SECRET).
    expect(secret.length, `secret handed on: ${JSON.stringify(secret)}`).toBeGreaterThanOrEqual(32)
    expect(() => parseConfig({ AUTH_SECRET: secret })).not.toThrow()
    // Replaced for good, and said so, naming the file (never the secret).
    expect(readFileSync(file, 'utf8').trim()).toBe(secret)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(file)
    expect(warnings[0]).not.toContain(secret)
    // The next start keeps it.
    expect(ensureAuthSecret(config, dir, (message) => warnings.push(message))).toBe(secret)
    expect(warnings).toHaveLength(1)
  })

  it('is generated once, owner-only, with no temporary file left, and kept across starts', () => {
    const dir = dataDir()
    const config = parseConfig({})
    const secret = ensureAuthSecret(config, dir, () => {})
    expect(secret.length).toBeGreaterThanOrEqual(32)
    expect(readdirSync(dir)).toEqual(['auth-secret'])
    expect(statSync(path.join(dir, 'auth-secret')).mode & 0o777).toBe(0o600)
    expect(ensureAuthSecret(config, dir, () => {})).toBe(secret)
  })

  it('AUTH_SECRET, when set, is used and nothing is written', () => {
    const dir = dataDir()
    const secret = 's'.repeat(40)
    expect(ensureAuthSecret(parseConfig({ AUTH_SECRET: secret }), dir)).toBe(secret)
    expect(readdirSync(dir)).toEqual([])
  })

  it('a file that cannot be written is an error naming the file and its code', () => {
    const dir = path.join(dataDir(), 'missing')
    let error: unknown
    try {
      ensureAuthSecret(parseConfig({}), dir, () => {})
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(AuthSecretFileError)
    expect((error as Error).message).toBe(
      `Invalid configuration: DATA_DIR file ${path.join(dir, 'auth-secret')} cannot be used: ENOENT`,
    )
  })
})
