/**
 * Checks that the running Node.js is one the project supports: it satisfies
 * the project's `engines.node`, and no installed package declares an
 * `engines.node` that excludes it (what `npm install` warns about as
 * EBADENGINE), but for the exceptions named below, each only on the versions
 * it names. `.ci/run` runs it after installing (`npm run check:engines`) and
 * under each other supported line (scripts/test-node-versions.sh); README
 * "Node.js versions" names the supported range and the exceptions.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'

/** An installed package whose declared engine may exclude some supported Node.js versions. */
export interface EngineException {
  /** The Node.js versions (a semver range) on which its engine is not checked. */
  node: string
  /** Why that is safe. */
  why: string
}

export const ENGINE_EXCEPTIONS: Record<string, EngineException> = {
  '@prisma/streams-local': {
    // It declares >=22: on Node.js 22 and 24 it is checked like any other package.
    node: '^20',
    why:
      'part of `prisma dev` (a local Prisma Postgres server), which this project never runs; ' +
      'the prisma CLI itself declares ^20.19 || ^22.12 || >=24.0',
  },
}

export interface EngineProblem {
  /** The package's folder, relative to the project (`node_modules/…`), or `.` for the project. */
  location: string
  name: string
  /** Its declared `engines.node`. */
  required: string
}

interface PackageJson {
  name?: string
  engines?: { node?: string }
}

function readPackage(folder: string): PackageJson {
  return JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as PackageJson
}

/** True unless `range` is declared and `version` is outside it. */
function allows(range: string | undefined, version: string): boolean {
  return range === undefined || semver.satisfies(version, range, { includePrerelease: true })
}

function excepted(name: string, version: string): boolean {
  const exception = Object.hasOwn(ENGINE_EXCEPTIONS, name) ? ENGINE_EXCEPTIONS[name] : undefined
  return exception !== undefined && allows(exception.node, version)
}

/**
 * What stops `nodeVersion` being supported in the project at `root`: the
 * project's own range, then every installed package (as the lockfile lists
 * them) whose range excludes it and is not an exception.
 */
export function engineProblems(root: string, nodeVersion: string): EngineProblem[] {
  const project = readPackage(root)
  const problems: EngineProblem[] = []
  if (!allows(project.engines?.node, nodeVersion)) {
    problems.push({ location: '.', name: project.name ?? '.', required: project.engines!.node! })
  }
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, unknown>
  }
  for (const location of Object.keys(lock.packages)) {
    const folder = path.join(root, location)
    // The root entry is the project; optional packages for other platforms are not installed.
    if (location === '' || !existsSync(path.join(folder, 'package.json'))) continue
    const pkg = readPackage(folder)
    const name = pkg.name ?? location
    if (allows(pkg.engines?.node, nodeVersion) || excepted(name, nodeVersion)) continue
    problems.push({ location, name, required: pkg.engines!.node! })
  }
  return problems
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
  const problems = engineProblems(root, process.version)
  for (const p of problems) {
    console.error(
      `Node.js ${process.version} is outside ${p.name}'s engines.node "${p.required}" (${p.location})`,
    )
  }
  if (problems.length > 0) process.exit(1)
  console.log(`Node.js ${process.version}: within the engines of the project and every installed package`)
}
