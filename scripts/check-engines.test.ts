import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'
import { afterAll, describe, expect, it } from 'vitest'
import { ENGINE_EXCEPTIONS, engineProblems } from './check-engines'

const repository = path.join(path.dirname(fileURLToPath(import.meta.url)), '..')
const scratch = mkdtempSync(path.join(os.tmpdir(), 'check-engines-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** A project folder with the given package.json files installed (location → contents). */
function project(name: string, packages: Record<string, object | null>): string {
  const root = path.join(scratch, name)
  const lock: Record<string, object> = {}
  for (const [location, pkg] of Object.entries(packages)) {
    lock[location] = {}
    if (pkg === null) continue // listed in the lockfile, not installed (another platform's binary)
    mkdirSync(path.join(root, location), { recursive: true })
    writeFileSync(path.join(root, location, 'package.json'), JSON.stringify(pkg))
  }
  writeFileSync(path.join(root, 'package-lock.json'), JSON.stringify({ packages: lock }))
  return root
}

describe('check-engines', () => {
  it('the running Node.js is within the engines of this repository and every installed package', () => {
    expect(engineProblems(repository, process.version)).toEqual([])
  })

  it('so is the first release of each supported line, and nothing between or after them', () => {
    for (const version of ['v20.19.0', 'v22.12.0', 'v24.0.0']) {
      expect(engineProblems(repository, version), version).toEqual([])
    }
    for (const version of ['v20.18.3', 'v21.7.3', 'v22.11.0', 'v23.11.1', 'v25.0.0']) {
      expect(engineProblems(repository, version)[0], version).toMatchObject({ location: '.' })
    }
  })

  it('names the project and each installed package whose engines.node excludes the version, nested ones too', () => {
    const root = project('mixed', {
      '': { name: 'app', engines: { node: '^20.19' } },
      'node_modules/plain': { name: 'plain' },
      'node_modules/wide': { name: 'wide', engines: { node: '>=18' } },
      'node_modules/@scope/new-only': { name: '@scope/new-only', engines: { node: '>=22.12.0' } },
      'node_modules/wide/node_modules/deep': { name: 'deep', engines: { node: '^22 || ^24' } },
      'node_modules/other-platform': null,
    })
    expect(engineProblems(root, 'v20.20.2')).toEqual([
      { location: 'node_modules/@scope/new-only', name: '@scope/new-only', required: '>=22.12.0' },
      { location: 'node_modules/wide/node_modules/deep', name: 'deep', required: '^22 || ^24' },
    ])
    expect(engineProblems(root, 'v22.12.0')).toEqual([{ location: '.', name: 'app', required: '^20.19' }])
    expect(engineProblems(root, 'v20.18.0')[0]).toEqual({ location: '.', name: 'app', required: '^20.19' })
  })

  it('lets a named exception through on the versions it names, and only that one', () => {
    const [exception] = Object.keys(ENGINE_EXCEPTIONS) as [string]
    const root = project('exception', {
      '': { name: 'app' },
      [`node_modules/${exception}`]: { name: exception, engines: { node: '>=99' } },
      'node_modules/not-excepted': { name: 'not-excepted', engines: { node: '>=99' } },
    })
    const within = `v${semver.minVersion(ENGINE_EXCEPTIONS[exception]!.node)}`
    expect(engineProblems(root, within).map((p) => p.name)).toEqual(['not-excepted'])
    // Outside its versions, the exception's engine is checked like any other.
    expect(engineProblems(root, 'v24.0.0').map((p) => p.name)).toEqual([exception, 'not-excepted'])
  })
})
