/**
 * AUTH_SECRET signs portal sessions. In embedded mode (no DATABASE_URL) it is
 * generated once into the data directory so sessions survive restarts; a
 * real deployment must set it, since a secret that silently changes would
 * sign everyone out and one that is guessable would sign anyone in.
 *
 * The file is written atomically (a temporary file, fsync, rename), so a crash
 * or a full disk never leaves it empty or cut short. One that is anyway — from
 * an older version, or edited by hand — holds a secret the configuration itself
 * refuses (shorter than AUTH_SECRET's minimum), with which no process could have
 * started, so no session depends on it: it is replaced by a new one, with a warning.
 */
import { randomBytes } from 'node:crypto'
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs'
import path from 'node:path'
import { AUTH_SECRET_MIN_LENGTH, type Config } from '@/config/env'

/** A file of DATA_DIR that cannot be read or written: its one line names the file and the error code. */
export class AuthSecretFileError extends Error {
  constructor(
    readonly file: string,
    readonly code: string,
  ) {
    super(`Invalid configuration: DATA_DIR file ${file} cannot be used: ${code}`)
    this.name = 'AuthSecretFileError'
  }
}

/**
 * Without DATABASE_URL the secret is generated; with it, the operator must set one.
 * Refuses with one line and exit code 2, like every configuration refusal.
 */
export function refuseMissingAuthSecret(config: Config): void {
  if (config.AUTH_SECRET || config.embeddedDatabase) return
  process.stderr.write('Invalid configuration: AUTH_SECRET is required when DATABASE_URL is set\n')
  process.exit(2)
}

/**
 * The secret the processes get: AUTH_SECRET, or the one generated into DATA_DIR/auth-secret.
 * Throws AuthSecretFileError when that file cannot be read or written.
 */
export function ensureAuthSecret(
  config: Config,
  dataDir: string,
  warn: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
): string {
  if (config.AUTH_SECRET) return config.AUTH_SECRET
  refuseMissingAuthSecret(config)
  const file = path.join(dataDir, 'auth-secret')
  if (existsSync(file)) {
    const stored = fileOp(file, () => readFileSync(file, 'utf8')).trim()
    if (stored.length >= AUTH_SECRET_MIN_LENGTH) return stored
    warn(
      `${file} holds ${stored.length === 0 ? 'no secret' : 'a secret cut short'} (fewer than ${AUTH_SECRET_MIN_LENGTH} characters, which no process accepts): generating a new one`,
    )
  }
  const secret = randomBytes(32).toString('base64url')
  writeAtomically(file, `${secret}\n`)
  return secret
}

/** Writes `content` to `file` so that the file is either as it was or complete, never partial. */
function writeAtomically(file: string, content: string): void {
  const temp = `${file}.${process.pid}.tmp`
  fileOp(file, () => {
    try {
      const fd = openSync(temp, 'w', 0o600)
      try {
        writeSync(fd, content)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
      renameSync(temp, file)
    } catch (err) {
      rmSync(temp, { force: true })
      throw err
    }
  })
  // The rename itself survives a crash once the directory is on disk; not every platform can fsync one.
  try {
    const dir = openSync(path.dirname(file), 'r')
    try {
      fsyncSync(dir)
    } finally {
      closeSync(dir)
    }
  } catch {}
}

function fileOp<T>(file: string, op: () => T): T {
  try {
    return op()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (typeof code === 'string') throw new AuthSecretFileError(file, code)
    throw err
  }
}
