/**
 * The layering of src/ (README, "Architecture"), checked on the imports of
 * every source file, parsed with TypeScript's own pre-processor (static,
 * type-only, re-export and dynamic imports alike):
 *  - the indexer runs, and fails, independently of the web side;
 *  - procedures never reach into the indexer (they read what it wrote);
 *  - browser code never touches the database;
 *  - src/lib is shared with the browser: no database, no Node-only module.
 * And the library-internals fence (docs/api.md, "Library internals and the
 * upgrade gate"): tRPC's `_def` and zod's `_zod` are read only in
 * src/server/api/internals, where upgrade-gate tests cover them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '..')
const GENERATED = path.join(SRC, 'db', 'generated')

/** Packages that only run under Node (or only on the server). */
const NODE_ONLY_PACKAGES = [
  'pg',
  'pg-copy-streams',
  'ioredis',
  '@prisma/client',
  '@prisma/adapter-pg',
  'pino',
  'server-only',
  'esbuild',
  'tsx',
  'solc',
  '@electric-sql/pglite',
  '@electric-sql/pglite-socket',
  '@foundry-rs/anvil',
]
const DATABASE_PACKAGES = ['pg', 'pg-copy-streams', '@prisma/client', '@prisma/adapter-pg']

/** A source file's imports: the specifier as written and, for project files, the path it names (no extension). */
interface Import {
  specifier: string
  /** Absolute path inside src/ for `@/…` and relative specifiers; null for packages. */
  target: string | null
}

interface Rule {
  name: string
  /** Whether the rule applies to this file (path relative to src/, with its text). */
  appliesTo: (file: string, code: string) => boolean
  forbids: (imported: Import) => boolean
}

const inside = (target: string | null, ...folders: string[]) =>
  target !== null &&
  folders.some((folder) => {
    const dir = path.join(SRC, folder)
    return target === dir || target.startsWith(dir + path.sep)
  })

/** The npm package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

const isNodeBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || builtinModules.includes(packageOf(specifier))

const isPackage = (imported: Import, packages: string[]) =>
  imported.target === null && packages.includes(packageOf(imported.specifier))

const isClientModule = (code: string) =>
  /^\s*(?:\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*['"]use client['"]/.test(code)

const RULES: Rule[] = [
  {
    name: 'src/indexer does not import the web side (src/server, src/app, src/components)',
    appliesTo: (file) => file.startsWith(`indexer${path.sep}`),
    forbids: ({ target }) => inside(target, 'server', 'app', 'components'),
  },
  {
    name: 'procedures (src/server/api) do not import the indexer',
    appliesTo: (file) => file.startsWith(`server${path.sep}api${path.sep}`),
    forbids: ({ target }) => inside(target, 'indexer'),
  },
  {
    name: 'browser code (src/components, "use client" modules of src/app) does not import the database',
    appliesTo: (file, code) =>
      file.startsWith(`components${path.sep}`) || (file.startsWith(`app${path.sep}`) && isClientModule(code)),
    forbids: (imported) => inside(imported.target, 'db') || isPackage(imported, DATABASE_PACKAGES),
  },
  {
    name: 'src/lib imports only src/lib and packages that run in the browser',
    appliesTo: (file) => file.startsWith(`lib${path.sep}`),
    forbids: (imported) =>
      imported.target !== null
        ? !inside(imported.target, 'lib')
        : isNodeBuiltin(imported.specifier) || isPackage(imported, NODE_ONLY_PACKAGES),
  },
]

const INTERNALS = path.join('server', 'api', 'internals')
/** A property access to a library's internals (`x._def`, `x?._zod`, `x['_def']`), not the words in comments or strings. */
const INTERNAL_NAMES = new Set(['_def', '_zod'])

function internalsRead(code: string): string[] {
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && INTERNAL_NAMES.has(node.name.text)) found.push(node.name.text)
    if (
      ts.isElementAccessExpression(node) &&
      ts.isStringLiteralLike(node.argumentExpression) &&
      INTERNAL_NAMES.has(node.argumentExpression.text)
    )
      found.push(node.argumentExpression.text)
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile('x.tsx', code, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX))
  return found
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name)
    if (full === GENERATED) return []
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return /\.tsx?$/.test(name) ? [full] : []
  })
}

function importsOf(file: string, code: string): Import[] {
  return ts.preProcessFile(code, true, true).importedFiles.map(({ fileName: specifier }) => ({
    specifier,
    target: specifier.startsWith('@/')
      ? path.join(SRC, specifier.slice(2))
      : specifier.startsWith('.')
        ? path.resolve(path.dirname(file), specifier)
        : null,
  }))
}

/** Every broken rule in the given files, as `file imports specifier (rule)`. */
function violations(files: { file: string; code: string }[]): string[] {
  const found: string[] = []
  for (const { file, code } of files) {
    const relative = path.relative(SRC, file)
    if (!relative.startsWith(INTERNALS + path.sep)) {
      for (const name of internalsRead(code))
        found.push(`${relative} reads ${name} (library internals only in src/server/api/internals)`)
    }
    const rules = RULES.filter((rule) => rule.appliesTo(relative, code))
    if (rules.length === 0) continue
    for (const imported of importsOf(file, code)) {
      for (const rule of rules) {
        if (rule.forbids(imported)) found.push(`${relative} imports ${imported.specifier} (${rule.name})`)
      }
    }
  }
  return found
}

describe('architecture', () => {
  it('every source file keeps to the layering', () => {
    const files = sourceFiles(SRC).map((file) => ({ file, code: readFileSync(file, 'utf8') }))
    expect(files.length).toBeGreaterThan(100)
    expect(violations(files)).toEqual([])
  })

  it('the check sees every kind of import', () => {
    const file = path.join(SRC, 'indexer', 'sync', 'x.ts')
    const code = [
      "import { x } from '@/server/api/root'",
      "import type { Y } from '../../app/page'",
      "export * from '@/components/ui/button'",
      "const z = await import('@/server/services')",
      'const text = "import { no } from \'@/server/not-an-import\'"',
    ].join('\n')
    expect(importsOf(file, code).map((i) => i.target)).toEqual([
      path.join(SRC, 'server/api/root'),
      path.join(SRC, 'app/page'),
      path.join(SRC, 'components/ui/button'),
      path.join(SRC, 'server/services'),
    ])
  })

  it('each rule catches the import it forbids', () => {
    const at = (file: string, code: string) => ({ file: path.join(SRC, file), code })
    expect(
      violations([
        at('indexer/sync/x.ts', "import { handler } from '@/server/http/server'"),
        at('server/api/routers/x/x.handler.ts', "import { commitBatch } from '@/indexer/store/commit'"),
        at('components/x.tsx', "import pg from 'pg'"),
        at('app/x/page.tsx', "'use client'\nimport { createPool } from '@/db/pool'"),
        at('lib/x.ts', "import { createHash } from 'node:crypto'"),
        at('lib/y.ts', "import { readFileSync } from 'fs'"),
        at('lib/z.ts', "import Redis from 'ioredis'"),
        at('lib/w.ts', "import { loadConfig } from '../config/env'"),
        at(
          'server/api/routers/media/media.handler.ts',
          "import { mediaPath } from '@/indexer/metadata/media-store'",
        ),
        at('server/rest/x.ts', 'const procedures = router._def.procedures'),
        at('lib/v.ts', "const def = schema?.['_zod'].def"),
      ]),
    ).toHaveLength(11)
    // Allowed: a server component reading through the server side, lib using zod, internals
    // read inside their folder, and the names in a comment or a string.
    expect(
      violations([
        at('app/x/page.tsx', "import { openDatabase } from '@/db/database'"),
        at('lib/x.ts', "import { z } from 'zod'\nimport { address } from './schemas'"),
        at('server/api/internals/x.ts', 'const def = procedure._def'),
        at('server/rest/y.ts', "// reads router._def\nconst text = 'schema._zod'"),
      ]),
    ).toEqual([])
  })
})
