/**
 * The committed types are those of the current OpenAPI document, and the
 * client stays a client: its modules import one another and openapi-fetch,
 * nothing of the service.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLIENT_TYPES_FILE, clientTypes } from '../../scripts/client-types'

describe('src/client', () => {
  it('schema.ts is generated from the current /openapi.json (run `npm run client:types`)', async () => {
    expect(readFileSync(CLIENT_TYPES_FILE, 'utf8')).toBe(await clientTypes())
  })

  it('imports nothing but its own modules and its dependencies (openapi-fetch, eventsource-parser, standardwebhooks)', () => {
    const dir = path.dirname(CLIENT_TYPES_FILE)
    const dependencies = Object.keys(
      (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies: object })
        .dependencies,
    )
    expect(dependencies.sort()).toEqual(['eventsource-parser', 'openapi-fetch', 'standardwebhooks'])
    const modules = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    expect(modules).toContain('index.ts')
    for (const file of modules) {
      const source = readFileSync(path.join(dir, file), 'utf8')
      const imports = [...source.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g)].map(
        (m) => m[1] ?? m[2],
      )
      for (const specifier of imports) {
        expect(
          dependencies.includes(specifier!) || /^\.\/[a-z-]+\.js$/.test(specifier!),
          `${file} imports ${specifier}`,
        ).toBe(true)
      }
    }
  })
})
