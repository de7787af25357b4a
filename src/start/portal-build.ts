/**
 * The portal is a Next.js production build. `npm start` rebuilds it only when
 * its inputs changed since the last build (a hash of the sources is kept next
 * to the build), so a fresh checkout and a `git pull` both just work.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { type Logger, logFormat, logOutputLines } from '@/config/logger'
import { EXIT_WITH_PARENT } from './exit-with-parent'

const INPUTS = ['src', 'public', 'next.config.mjs', 'package-lock.json', 'tsconfig.json']
const SKIP = new Set(['generated', 'node_modules'])

function hashInputs(root: string): string {
  const hash = createHash('sha256')
  const visit = (p: string) => {
    const stat = statSync(p, { throwIfNoEntry: false })
    if (!stat) return
    if (stat.isDirectory()) {
      for (const name of readdirSync(p).sort()) {
        if (!SKIP.has(name) && !name.endsWith('.test.ts')) visit(path.join(p, name))
      }
    } else {
      hash.update(path.relative(root, p)).update(readFileSync(p))
    }
  }
  for (const input of INPUTS) visit(path.join(root, input))
  return hash.digest('hex')
}

export async function ensurePortalBuild(root: string, logger: Logger): Promise<void> {
  const marker = path.join(root, '.next', 'source-hash')
  const current = hashInputs(root)
  const built = existsSync(path.join(root, '.next', 'BUILD_ID')) && existsSync(marker)
  if (built && readFileSync(marker, 'utf8') === current) return
  logger.info('building the portal (first start or changed sources)…')
  const started = Date.now()
  await new Promise<void>((resolve, reject) => {
    const next = path.join(root, 'node_modules/next/dist/bin/next')
    // The build's progress on a terminal as Next.js prints it; anywhere else as log records.
    const json = logFormat(process.stdout) === 'json'
    // A build outlives no `npm start`: it stops when its parent is gone.
    const child = spawn(process.execPath, ['--import', EXIT_WITH_PARENT, next, 'build'], {
      cwd: root,
      stdio: json ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      env: {
        ...process.env,
        NEXT_TELEMETRY_DISABLED: '1',
        NODE_ENV: 'production',
        NFT_PARENT_PID: String(process.pid),
      },
    })
    if (json) {
      logOutputLines(logger, child.stdout!, 'next build')
      logOutputLines(logger, child.stderr!, 'next build', 'warn')
    }
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`next build exited with ${code}`)),
    )
  })
  writeFileSync(marker, current)
  logger.info({ seconds: Math.round((Date.now() - started) / 1000) }, 'portal built')
}
