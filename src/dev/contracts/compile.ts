/**
 * Compiles Solidity with solc-js (npm `solc`) and caches the result on disk, so only the
 * first start after a source change pays for compilation. General purpose: tests compile
 * their own contracts with it too. Imports such as `@openzeppelin/...` resolve from
 * node_modules; relative imports resolve against the importing file.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Abi, Hex } from 'viem'

export type CompiledContract = { abi: Abi; bytecode: Hex }
export type CompiledContracts = Record<string, CompiledContract>

export type CompileOptions = {
  /** Where compiled output is cached; default node_modules/.cache/nft-data-service/solc. */
  cacheDir?: string
  /** Optimizer runs; default 200. Pass 0 to disable the optimizer. */
  optimizerRuns?: number
  /** solc's evmVersion; default: the compiler's own default (anvil runs the latest hardfork). */
  evmVersion?: string
}

/** Bump when the cached file's shape or the compiler settings change meaning. */
const CACHE_FORMAT = 1
const require = createRequire(import.meta.url)
const moduleDir = path.dirname(fileURLToPath(import.meta.url))

type SolcOutput = {
  errors?: { severity: string; formattedMessage: string }[]
  sources?: Record<string, unknown>
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

export async function compileContracts(
  files: string[],
  options: CompileOptions = {},
): Promise<CompiledContracts> {
  if (files.length === 0) return {}
  const entryUnits = files.map((file) => unitNameFor(path.resolve(file)))
  const sources = collectSources(entryUnits)
  const settings = {
    optimizer: { enabled: (options.optimizerRuns ?? 200) > 0, runs: options.optimizerRuns || 200 },
    ...(options.evmVersion ? { evmVersion: options.evmVersion } : {}),
    outputSelection: Object.fromEntries(
      entryUnits.map((unit) => [unit, { '*': ['abi', 'evm.bytecode.object'] }]),
    ),
  }

  const key = createHash('sha256')
    .update(JSON.stringify({ format: CACHE_FORMAT, solc: solcPackageVersion(), settings, sources }))
    .digest('hex')
  const cacheDir = options.cacheDir ?? defaultCacheDir()
  const cacheFile = path.join(cacheDir, `${key}.json`)
  const cached = await readCache(cacheFile)
  if (cached) return cached

  const { default: solc } = await import('solc')
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([unit, content]) => [unit, { content }])),
    settings,
  }
  // The pre-scan should have found every import; anything solc still asks for is read here,
  // but then the cache key did not cover it, so the result is not cached.
  let missedImports = false
  const findImports = (unit: string) => {
    const content = readSource(unit)
    if (content === undefined) return { error: `File not found: ${unit}` }
    missedImports = true
    return { contents: content }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput

  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) {
    throw new Error(`Solidity compilation failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`)
  }

  const result: CompiledContracts = {}
  for (const unit of entryUnits) {
    for (const [name, contract] of Object.entries(output.contracts?.[unit] ?? {})) {
      if (result[name]) throw new Error(`Two contracts named ${name} (one in ${unit}); rename one`)
      result[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
    }
  }
  if (!missedImports) await writeCache(cacheFile, result)
  return result
}

/** Source unit names: paths relative to the working directory when inside it, else absolute. */
function unitNameFor(absolutePath: string): string {
  const relative = path.relative(process.cwd(), absolutePath)
  const inside = relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)
  return (inside ? relative : absolutePath).split(path.sep).join('/')
}

/** Reads the entry files and, transitively, everything they import. */
function collectSources(entryUnits: string[]): Record<string, string> {
  const sources: Record<string, string> = {}
  const pending = [...entryUnits]
  while (pending.length > 0) {
    const unit = pending.pop()!
    if (unit in sources) continue
    const content = readSource(unit)
    if (content === undefined) {
      if (entryUnits.includes(unit)) throw new Error(`Solidity source not found: ${unit}`)
      continue // Let solc report the unresolved import with its own message.
    }
    sources[unit] = content
    for (const imported of importsOf(content)) pending.push(resolveImport(unit, imported))
  }
  // Sorted keys give a cache key independent of discovery order.
  return Object.fromEntries(Object.entries(sources).sort(([a], [b]) => a.localeCompare(b)))
}

function importsOf(source: string): string[] {
  const withoutComments = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const pattern = /\bimport\s+(?:[^;'"]*?\bfrom\s+)?["']([^"']+)["']/g
  return [...withoutComments.matchAll(pattern)].map((m) => m[1]!)
}

/** solc's rule: `./` and `../` are relative to the importing unit, anything else is as written. */
function resolveImport(fromUnit: string, imported: string): string {
  if (!imported.startsWith('./') && !imported.startsWith('../')) return imported
  return path.posix.normalize(path.posix.join(path.posix.dirname(fromUnit), imported))
}

function readSource(unit: string): string | undefined {
  const candidates = path.isAbsolute(unit)
    ? [unit]
    : [path.resolve(unit), ...nodeModulesDirs().map((dir) => path.join(dir, unit))]
  for (const candidate of candidates) {
    if (existsSync(candidate)) return readFileSync(candidate, 'utf8')
  }
  return undefined
}

/** node_modules folders above the working directory and above this module (for packages). */
function nodeModulesDirs(): string[] {
  const dirs: string[] = []
  for (const start of [process.cwd(), moduleDir]) {
    for (let dir = start; ; dir = path.dirname(dir)) {
      const candidate = path.join(dir, 'node_modules')
      if (!dirs.includes(candidate) && existsSync(candidate)) dirs.push(candidate)
      if (path.dirname(dir) === dir) break
    }
  }
  return dirs
}

function solcPackageVersion(): string {
  const packageJson = path.join(path.dirname(require.resolve('solc')), 'package.json')
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version
}

function defaultCacheDir(): string {
  const nodeModules = nodeModulesDirs()[0] ?? path.resolve('node_modules')
  return path.join(nodeModules, '.cache', 'nft-data-service', 'solc')
}

async function readCache(file: string): Promise<CompiledContracts | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as CompiledContracts
  } catch {
    return undefined // Missing or half-written: compile again.
  }
}

async function writeCache(file: string, result: CompiledContracts): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true })
    // Write then rename, so a concurrent reader never sees a partial file.
    const temporary = `${file}.${process.pid}.${Date.now()}.tmp`
    await writeFile(temporary, JSON.stringify(result))
    await rename(temporary, file)
  } catch {
    // A read-only cache location only costs a recompile next time.
  }
}
