/**
 * The layering of src/ (README, "Architecture"), checked on the imports of
 * every source file, parsed with TypeScript's own pre-processor (static,
 * type-only, re-export and dynamic imports alike):
 *  - the indexer runs, and fails, independently of the web side;
 *  - procedures and the REST layer never reach into the indexer (they read
 *    what it wrote);
 *  - browser code never touches the database;
 *  - src/lib is shared with the browser: no database, no Node-only module.
 * Inside src/server and src/server/api, folders are layers (LAYERS below): a
 * folder imports only folders listed before it, and no folder imports the
 * composition root (the files directly in src/server). Tests are exempt: they
 * drive a layer from the outside.
 * Queries have one home (docs/design.md, "Layout"): a database call —
 * SQL sent through a pool or client, a Prisma model or raw query, a
 * transaction, a COPY stream — appears only under src/db (src/db/queries for
 * the web side) and src/indexer/store (the indexer's one writer). Tests and
 * test tools are exempt.
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
    name: 'procedures and the REST layer (src/server/api, src/server/rest) do not import the indexer',
    appliesTo: (file) =>
      file.startsWith(`server${path.sep}api${path.sep}`) ||
      file.startsWith(`server${path.sep}rest${path.sep}`),
    forbids: ({ target }) => inside(target, 'indexer'),
  },
  {
    name: 'browser code (src/components, "use client" modules of src/app) does not import the database',
    appliesTo: (file, code) =>
      file.startsWith(`components${path.sep}`) || (file.startsWith(`app${path.sep}`) && isClientModule(code)),
    forbids: (imported) => inside(imported.target, 'db') || isPackage(imported, DATABASE_PACKAGES),
  },
  {
    name: 'the explorer (src/app/explore, src/components/explorer) reads through /v1 only: no src/server, src/db, src/indexer or src/config',
    appliesTo: (file) =>
      file.startsWith(`app${path.sep}explore${path.sep}`) ||
      file.startsWith(`components${path.sep}explorer${path.sep}`),
    forbids: (imported) =>
      inside(imported.target, 'server', 'db', 'indexer', 'config') || isPackage(imported, DATABASE_PACKAGES),
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

/**
 * The layers of a folder, lowest first (docs/design.md, "Layout"). A folder
 * may import its own files and the folders before it; folders in one entry
 * (the /v1 and portal features) do not import each other. Files directly in
 * the folder are its composition root: nothing below imports them.
 */
const LAYERS: Record<string, string[][]> = {
  server: [
    ['errors'],
    ['http'],
    ['ratelimit'],
    ['metrics'],
    ['credentials'],
    ['services'],
    ['portal-auth'],
    ['api'],
    ['push'],
    ['rest'],
  ],
  [path.join('server', 'api')]: [['read'], ['trpc'], ['internals'], ['v1', 'portal']],
}

/** `file imports target` against the layers of every layered folder holding both (null when allowed). */
function layerViolation(file: string, target: string): string | null {
  for (const [folder, layers] of Object.entries(LAYERS)) {
    const root = path.join(SRC, folder)
    if (!file.startsWith(root + path.sep) || !target.startsWith(root + path.sep)) continue
    const [fromTop, ...fromRest] = path.relative(root, file).split(path.sep)
    const [toTop, ...toRest] = path.relative(root, target).split(path.sep)
    if (fromRest.length === 0 || fromTop === toTop) continue // the composition root, or within one folder
    if (toRest.length === 0) return `${folder} layers: ${fromTop}/ imports the composition root`
    const rank = (name: string) => layers.findIndex((layer) => layer.includes(name))
    const [from, to] = [rank(fromTop!), rank(toTop!)]
    if (from === -1) return `${folder} layers: ${fromTop}/ is not in LAYERS`
    if (to === -1 || to >= from) return `${folder} layers: ${fromTop}/ imports ${toTop}/, not below it`
  }
  return null
}

/** Where database calls may be made (relative to src/), and the test tools exempt from that. */
const DATA_ACCESS_HOMES = ['db', path.join('indexer', 'store')]
const TEST_TOOLS = ['test', path.join('indexer', 'test')]
/** Prisma's client (`db.prisma`), its raw queries and transactions; `pg-copy-streams` is caught by import. */
const PRISMA_NAMES = new Set([
  'prisma',
  '$queryRaw',
  '$queryRawUnsafe',
  '$executeRaw',
  '$executeRawUnsafe',
  '$transaction',
])

/**
 * The database calls in a file's code: `x.query(sql, …)` (a tRPC procedure's
 * `.query(handler)` takes a function and is not one), `pool.connect()`, and
 * Prisma by its names. Comments and strings are not code.
 */
function databaseCalls(code: string): string[] {
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const name = node.expression.name.text
      const first = node.arguments[0]
      if (name === 'query' && first && !ts.isArrowFunction(first) && !ts.isFunctionExpression(first))
        found.push('.query(…)')
      if (
        name === 'connect' &&
        node.arguments.length === 0 &&
        /pool|db/i.test(node.expression.expression.getText())
      )
        found.push('.connect()')
    }
    if (ts.isPropertyAccessExpression(node) && PRISMA_NAMES.has(node.name.text))
      found.push(`.${node.name.text}`)
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile('x.tsx', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX))
  return found
}

const isTest = (file: string) => /\.test\.tsx?$/.test(file)

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
    const underAny = (folders: string[]) => folders.some((folder) => relative.startsWith(folder + path.sep))
    if (!isTest(file) && !underAny(DATA_ACCESS_HOMES) && !underAny(TEST_TOOLS)) {
      for (const call of new Set(databaseCalls(code)))
        found.push(`${relative} calls ${call} (database calls only in src/db and src/indexer/store)`)
      if (
        code.includes('pg-copy-streams') &&
        importsOf(file, code).some((i) => i.specifier === 'pg-copy-streams')
      )
        found.push(
          `${relative} imports pg-copy-streams (database calls only in src/db and src/indexer/store)`,
        )
    }
    if (!relative.startsWith(INTERNALS + path.sep)) {
      for (const name of internalsRead(code))
        found.push(`${relative} reads ${name} (library internals only in src/server/api/internals)`)
    }
    const rules = RULES.filter((rule) => rule.appliesTo(relative, code))
    for (const imported of importsOf(file, code)) {
      for (const rule of rules) {
        if (rule.forbids(imported)) found.push(`${relative} imports ${imported.specifier} (${rule.name})`)
      }
      const layered = imported.target !== null && !isTest(file) ? layerViolation(file, imported.target) : null
      if (layered) found.push(`${relative} imports ${imported.specifier} (${layered})`)
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
      "const z = await import('@/server/services/next-services')",
      'const text = "import { no } from \'@/server/not-an-import\'"',
    ].join('\n')
    expect(importsOf(file, code).map((i) => i.target)).toEqual([
      path.join(SRC, 'server/api/root'),
      path.join(SRC, 'app/page'),
      path.join(SRC, 'components/ui/button'),
      path.join(SRC, 'server/services/next-services'),
    ])
  })

  it('each rule catches the import it forbids', () => {
    const at = (file: string, code: string) => ({ file: path.join(SRC, file), code })
    expect(
      violations([
        at('indexer/sync/x.ts', "import { handler } from '@/server/web-server'"),
        at('server/api/v1/x/x.handler.ts', "import { commitBatch } from '@/indexer/store/commit'"),
        at('components/x.tsx', "import pg from 'pg'"),
        at('app/x/page.tsx', "'use client'\nimport { createPool } from '@/db/pool'"),
        at('lib/x.ts', "import { createHash } from 'node:crypto'"),
        at('lib/y.ts', "import { readFileSync } from 'fs'"),
        at('lib/z.ts', "import Redis from 'ioredis'"),
        at('lib/w.ts', "import { loadConfig } from '@/config/env'"),
        at(
          'server/rest/media/media.handler.ts',
          "import { mediaPath } from '@/indexer/metadata/media-store'",
        ),
        at('server/rest/x.ts', 'const procedures = router._def.procedures'),
        at('lib/v.ts', "const def = schema?.['_zod'].def"),
        // Layers: upward, sideways between features, into the composition root, an unlisted folder.
        at('server/credentials/x.ts', "import { portalRouter } from '@/server/api/portal/router'"),
        at('server/http/x.ts', "import { Services } from '../services/web-services'"),
        at('server/api/read/x.ts', "import { nftPage } from '@/server/api/v1/nfts/nft.schema'"),
        at('server/api/v1/x/x.ts', "import { keysRouter } from '@/server/api/portal/keys/router'"),
        at('server/ratelimit/x.ts', "import { startWebServer } from '@/server/web-server'"),
        at('server/newfolder/x.ts', "import { ApiError } from '@/server/errors/api-error'"),
        // The explorer: a server page of it reads through the API too, never the server side
        // (its database import breaks the browser rule as well).
        at('app/explore/x/page.tsx', "import { getServices } from '@/server/services/next-services'"),
        at('components/explorer/x.tsx', "import { selectCollectionTokens } from '@/db/queries/tokens'"),
      ]),
    ).toHaveLength(20)
    // Allowed: a server component reading through the server side, lib using zod, internals
    // read inside their folder, and the names in a comment or a string.
    expect(
      violations([
        at('app/x/page.tsx', "import { openDatabase } from '@/db/database'"),
        at('lib/x.ts', "import { z } from 'zod'\nimport { address } from './schemas'"),
        at('server/api/internals/x.ts', 'const def = procedure._def'),
        at('server/rest/y.ts', "// reads router._def\nconst text = 'schema._zod'"),
        // Layers: downward, between files of one feature folder, the composition root, tests.
        at('server/rest/z.ts', "import { v1Router } from '@/server/api/v1/router'"),
        at('server/api/v1/nfts/x.ts', "import { historyOf } from '../collections/collection-shape'"),
        at('server/web-server.ts', "import { createRestHandler } from '@/server/rest/handler'"),
        at('server/api/portal/x.test.ts', "import { v1Router } from '@/server/api/v1/router'"),
      ]),
    ).toEqual([])
  })

  it('database calls are made only in src/db and src/indexer/store', () => {
    const at = (file: string, code: string) => ({ file: path.join(SRC, file), code })
    expect(
      violations([
        // SQL, a connection, Prisma, a raw statement, COPY: outside their homes.
        at('server/api/v1/x/x.handler.ts', 'const { rows } = await ctx.db.pool.query(`SELECT 1`)'),
        at('indexer/sync/x.ts', "await pool.query('BEGIN')"),
        at('indexer/metadata/x.ts', 'const client = await this.pool.connect()'),
        at('server/credentials/x.ts', 'await db.prisma.apiKey.findMany({})'),
        at('server/portal-auth/x.ts', 'await tx.$executeRaw`DELETE FROM siwe_nonces`'),
        at('start/x.ts', "import { from as copyFrom } from 'pg-copy-streams'"),
      ]),
    ).toHaveLength(6)
    // In their homes and in tests; a tRPC procedure's .query(handler); words in comments and strings.
    expect(
      violations([
        at('db/queries/x.ts', 'await db.pool.query(`SELECT 1`)'),
        at('indexer/store/x.ts', 'await db.prisma.$transaction(async (tx) => tx.block.findMany())'),
        at('server/api/v1/x/x.test.ts', "await pool.query('SELECT 1')"),
        at('server/api/v1/x/router.ts', 'v1Procedure(route).query(({ ctx, input }) => list(ctx, input))'),
        at('server/x/x.ts', "// db.prisma.apiKey in a comment\nconst text = 'pool.query(sql)'"),
      ]),
    ).toEqual([])
  })
})
