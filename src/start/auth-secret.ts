/**
 * AUTH_SECRET signs portal sessions. In embedded mode (no DATABASE_URL) it is
 * generated once into the data directory so sessions survive restarts; a
 * real deployment must set it, since a secret that silently changes would
 * sign everyone out and one that is guessable would sign anyone in.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Config } from '@/config/env'

export function ensureAuthSecret(config: Config, dataDir: string): string {
  if (config.AUTH_SECRET) return config.AUTH_SECRET
  if (!config.embeddedDatabase) {
    process.stderr.write('Invalid configuration: AUTH_SECRET is required when DATABASE_URL is set\n')
    process.exit(2)
  }
  const file = path.join(dataDir, 'auth-secret')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  const secret = randomBytes(32).toString('base64url')
  writeFileSync(file, `${secret}\n`, { mode: 0o600 })
  return secret
}
