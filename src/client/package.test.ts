/**
 * The client as a package of its own (docs/client.md "The package"): packed
 * with npm, installed from the tarball into an empty project, and every
 * TypeScript example of its README type-checked there against the installed
 * declarations, then run with Node against the real service (PostgreSQL, the
 * REST layer, a real key) over the API test dataset. The examples are read
 * from the README itself, so the README and this test cannot drift apart.
 */
import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { buildDataset, c, people } from '@/test/api-dataset'
import { tempMediaDir } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

const packageDir = path.dirname(fileURLToPath(import.meta.url))
const repository = path.join(packageDir, '../..')
const tsc = path.join(repository, 'node_modules/typescript/bin/tsc')

/** npm without the settings of an `npm run` that may have started the tests. */
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
const execFileAsync = promisify(execFile)

/** Runs a command; on failure, the error carries what it printed. */
async function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
) {
  try {
    // Next.js's typings make NODE_ENV required; these children do not need it.
    return await execFileAsync(command, args, {
      cwd: options.cwd,
      env: options.env as NodeJS.ProcessEnv | undefined,
    })
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
    throw new Error(
      `${path.basename(command)} ${args.join(' ')} failed in ${options.cwd}:\n${stdout}${stderr}`,
    )
  }
}

interface Example {
  heading: string
  file: string
}

/** Each `ts` block of the README, named by the heading above it. */
function readmeExamples(readme: string): Array<Example & { source: string }> {
  const examples: Array<Example & { source: string }> = []
  let heading = ''
  for (const match of readme.matchAll(/^#+ (.+)$|^```ts\n([\s\S]*?)^```$/gm)) {
    if (match[1]) heading = match[1]
    else examples.push({ heading, file: `example-${examples.length + 1}`, source: match[2]! })
  }
  return examples
}

/**
 * `npm pack` of a copy of the package (so that its build writes nothing into
 * the repository), whose build tools are the repository's own; the tarball's path.
 */
async function packClient(into: string): Promise<string> {
  const copy = path.join(into, 'source/client')
  cpSync(packageDir, copy, { recursive: true, filter: (from) => !/[/\\](dist|node_modules)$/.test(from) })
  symlinkSync(path.join(repository, 'node_modules'), path.join(into, 'source/node_modules'))
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', into], {
    cwd: copy,
    env: npmEnv,
  })
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>
  return path.join(into, packed!.filename)
}

/**
 * An empty project with the packed client installed as the README says,
 * Node's types for the examples' `process.env` (the version this repository
 * uses), and the README's examples compiled there: type-checked against the
 * installed declarations, written as the JavaScript that Node runs.
 */
async function projectWithExamples(into: string): Promise<{ project: string; examples: Example[] }> {
  const tarball = await packClient(into)
  const project = path.join(into, 'project')
  mkdirSync(project)
  writeFileSync(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'project', private: true, type: 'module' }),
  )
  const nodeTypes = JSON.parse(
    readFileSync(path.join(repository, 'node_modules/@types/node/package.json'), 'utf8'),
  )
  await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, `@types/node@${nodeTypes.version}`],
    { cwd: project, env: npmEnv },
  )
  const found = readmeExamples(readFileSync(path.join(packageDir, 'README.md'), 'utf8'))
  for (const example of found) writeFileSync(path.join(project, `${example.file}.ts`), example.source)
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, types: ['node'], outDir: 'out' },
      include: ['*.ts'],
    }),
  )
  await run(process.execPath, [tsc, '-p', project], { cwd: project })
  return { project, examples: found.map(({ heading, file }) => ({ heading, file })) }
}

let db: TestDatabase
let api: ApiServer
let scratch: string
let project: string
let examples: Example[]

/** The API over the test dataset, with a real key. */
async function serveDataset(): Promise<ApiServer> {
  db = await createTestDatabase()
  const mediaDir = tempMediaDir()
  await buildDataset(db.pool, mediaDir)
  return startApiServer(db.url, { MEDIA_DIR: mediaDir })
}

beforeAll(async () => {
  scratch = mkdtempSync(path.join(os.tmpdir(), 'client-package-'))
  // Independent of each other: prepared side by side.
  const [server, installed] = await Promise.all([serveDataset(), projectWithExamples(scratch)])
  api = server
  ;({ project, examples } = installed)
}, 180_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
  if (scratch) rmSync(scratch, { recursive: true, force: true })
})

/** Runs a README example in the scratch project; its standard output. */
async function runExample(heading: string): Promise<string> {
  const example = examples.find((e) => e.heading === heading)
  expect(example, `README example under "${heading}"`).toBeDefined()
  const { stdout, stderr } = await run(process.execPath, [`out/${example!.file}.js`], {
    cwd: project,
    env: { PATH: process.env.PATH, NFT_API_URL: api.base, NFT_API_KEY: api.token },
  })
  expect(stderr).toBe('')
  return stdout
}

const listed = [
  [c.pioneers, 'Genesis Pioneers'],
  [c.glyphs, 'Onchain Glyphs'],
  [c.percent, '100%_Off Club'],
  [c.ancient, 'Ancient Relics'],
] as const

describe('the client package', () => {
  it("installs from its tarball into an empty project with its dependencies (openapi-fetch, eventsource-parser, standardwebhooks), on the service's Node.js versions", () => {
    const installed = JSON.parse(
      readFileSync(path.join(project, 'node_modules/@nft-data-service/client/package.json'), 'utf8'),
    )
    expect(installed.dependencies).toEqual({
      'eventsource-parser': expect.any(String),
      'openapi-fetch': expect.any(String),
      standardwebhooks: expect.any(String),
    })
    const service = JSON.parse(readFileSync(path.join(repository, 'package.json'), 'utf8'))
    expect(installed.engines).toEqual({ node: service.engines.node })
    expect(readFileSync(path.join(project, 'node_modules/openapi-fetch/package.json'), 'utf8')).toContain(
      '"name": "openapi-fetch"',
    )
    expect(readFileSync(path.join(project, 'node_modules/standardwebhooks/package.json'), 'utf8')).toContain(
      '"name": "standardwebhooks"',
    )
  })

  it('every README example is one this test runs', () => {
    expect(examples.map((e) => e.heading)).toEqual([
      'Quick start',
      'Every item of a list',
      'One NFT',
      'Errors',
      'Retries and a demo token',
      'Following new activity',
    ])
  })

  it('Quick start: the indexer status', async () => {
    expect(await runExample('Quick start')).toMatch(/^devnet: confirmed up to block \d+\n$/)
  })

  it('Every item of a list: every listed collection, over pages of two', async () => {
    const lines = (await runExample('Every item of a list')).trim().split('\n')
    expect(lines.sort()).toEqual(listed.map(([address, name]) => `${address} ${name}`).sort())
  })

  it('One NFT: the token, its owner and its artwork', async () => {
    const [line, artwork] = (await runExample('One NFT')).trim().split('\n')
    expect(line).toBe(`Genesis Pioneers #1: Pioneer #1, owned by ${people.alice}`)
    expect(artwork).toMatch(/^(data:image\/svg\+xml|http:\/\/api\.test\/v1\/media)/)
  })

  it('Errors: a 404 as NftDataApiError with its code and request id', async () => {
    expect(await runExample('Errors')).toMatch(/^404 NOT_FOUND request \S+\n$/)
  })

  it('Retries and a demo token: a token with its expiry and scopes', async () => {
    expect(await runExample('Retries and a demo token')).toMatch(
      /^a demo token until \d{4}-\d\d-\d\dT[\d:.]+Z, scopes read:\S+( read:\S+)*\n$/,
    )
  })

  it('Following new activity: the first page of mints, then stops when the signal aborts', async () => {
    const lines = (await runExample('Following new activity')).trim().split('\n')
    expect(lines).toHaveLength(5)
    const addresses = Object.values(c) as string[]
    for (const line of lines) {
      const [block, address, tokenId, confirmations] = line.split(' ')
      expect(block).toMatch(/^\d+$/)
      expect(addresses).toContain(address)
      expect(tokenId).toMatch(/^\d+$/)
      expect(confirmations).toMatch(/^\d+$/)
    }
  })
})
