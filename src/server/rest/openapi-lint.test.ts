/**
 * /openapi.json passes two independent OpenAPI linters with nothing to
 * report: Redocly CLI (`recommended`, redocly.yaml) and Spectral
 * (`spectral:oas`, .spectral.yaml). Both run offline: their rulesets ship
 * with the CLIs, and Redocly's telemetry is turned off. The one Spectral rule
 * turned off (scopes of non-OAuth schemes) is checked here instead.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import type { OperationObject } from 'openapi3-ts/oas31'
import { describe, expect, it } from 'vitest'
import { SCOPES } from '@/lib/scopes'
import { openApiDocument } from './openapi'

const run = promisify(execFile)
const bin = (name: string) => path.join(process.cwd(), 'node_modules', '.bin', name)

// A deployment's address: the linters warn about localhost and example.com servers.
const doc = openApiDocument({ PUBLIC_URL: 'https://nft-data.test', NETWORK: 'devnet' })
const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-')), 'openapi.json')
writeFileSync(file, JSON.stringify(doc, null, 2))

const LINT_ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }

describe('/openapi.json lint', () => {
  it('Redocly (recommended) reports no error and no warning', async () => {
    const { stdout } = await run(bin('redocly'), ['lint', file, '--format', 'json'], {
      env: LINT_ENV,
    }).catch((err: { stdout: string }) => err)
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number }
      problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>
    }
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)
    expect(problems).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
  })

  it('Spectral (spectral:oas) reports no error and no warning', async () => {
    const ruleset = path.join(process.cwd(), '.spectral.yaml')
    const { stdout } = await run(
      bin('spectral'),
      ['lint', file, '--ruleset', ruleset, '--format', 'json', '--quiet'],
      {
        env: LINT_ENV,
      },
    ).catch((err: { stdout: string }) => err)
    const results = JSON.parse(stdout) as Array<{ code: string; message: string; path: string[] }>
    expect(results.map((r) => `${r.code}: ${r.message} at ${r.path.join('.')}`)).toEqual([])
  })

  it('names in every security requirement a defined scheme and scopes that keys carry', () => {
    const schemes = Object.keys(doc.components?.securitySchemes ?? {})
    let scoped = 0
    for (const [p, item] of Object.entries(doc.paths ?? {})) {
      for (const [method, operation] of Object.entries(item as Record<string, OperationObject>)) {
        expect(operation.security, `${method} ${p}`).toBeDefined()
        for (const requirement of operation.security ?? []) {
          for (const [scheme, roles] of Object.entries(requirement)) {
            expect(schemes, `${method} ${p}`).toContain(scheme)
            for (const role of roles) expect(SCOPES, `${method} ${p}`).toContain(role)
            if (roles.length > 0) scoped++
          }
        }
      }
    }
    // Fifteen GET endpoints and their HEADs, and the live stream (GET only).
    expect(scoped).toBe(31)
  })
})
