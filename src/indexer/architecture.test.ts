import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const indexerDir = path.dirname(fileURLToPath(import.meta.url))
const srcDir = path.resolve(indexerDir, '..')
/** The web layer: the indexer must run (and fail) independently of it. */
const FORBIDDEN = [
  path.join(srcDir, 'server', 'api'),
  path.join(srcDir, 'app'),
  path.join(srcDir, 'components'),
]

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return /\.tsx?$/.test(name) ? [full] : []
  })
}

/** Every module specifier of import/export-from statements and dynamic imports. */
function specifiers(code: string): string[] {
  const found: string[] = []
  const pattern =
    /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g
  for (const match of code.matchAll(pattern)) found.push(match[1] ?? match[2] ?? match[3]!)
  return found
}

function resolve(from: string, specifier: string): string | null {
  if (specifier.startsWith('@/')) return path.join(srcDir, specifier.slice(2))
  if (specifier.startsWith('.')) return path.resolve(path.dirname(from), specifier)
  return null
}

describe('architecture', () => {
  it('src/indexer never imports the web layer (src/server/api, src/app, src/components)', () => {
    const violations: string[] = []
    const self = fileURLToPath(import.meta.url)
    for (const file of sourceFiles(indexerDir).filter((f) => f !== self)) {
      for (const specifier of specifiers(readFileSync(file, 'utf8'))) {
        const target = resolve(file, specifier)
        if (target && FORBIDDEN.some((dir) => target === dir || target.startsWith(dir + path.sep))) {
          violations.push(`${path.relative(srcDir, file)} imports ${specifier}`)
        }
      }
    }
    expect(violations).toEqual([])
  })

  it('the check itself sees such an import', () => {
    const fake = path.join(indexerDir, 'sync', 'x.ts')
    expect(
      specifiers("import { x } from '@/server/api/root'\nconst y = await import('../../app/page')").map((s) =>
        resolve(fake, s),
      ),
    ).toEqual([path.join(srcDir, 'server/api/root'), path.join(srcDir, 'app/page')])
  })
})
