/**
 * Configuration comes through the validated contract (./env.ts) and nowhere
 * else (docs/design.md, "Configuration contract"). Every use of `process.env`
 * in the service's source — tests and test helpers aside — is listed here with
 * its reason; a new one fails until it goes through the contract or is added
 * here with a reason a reviewer accepts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '..')

/** File (relative to src/) → its uses of process.env, as `envUses` names them. */
const ALLOWED: Record<string, string[]> = {
  // The contract itself: loadConfig() and productionMode() take the environment as a whole.
  'config/env.ts': ['process.env', 'process.env'],
  // next-auth v4 reads NEXTAUTH_URL from the environment only (the file says where).
  'config/next-auth-url.ts': ['write NEXTAUTH_URL'],
  // Next.js replaces process.env.NODE_ENV at build time: the build's mode, not a run-time setting.
  'app/layout.tsx': ['read NODE_ENV'],
  // Process wiring preloaded before any module, in plain JavaScript: the parent's pid, then gone.
  'start/exit-with-parent.mjs': ['read NFT_PARENT_PID', 'delete NFT_PARENT_PID'],
  // `npm start` and its helpers hand their environment on to the processes they run.
  'start/main.ts': ['...process.env'],
  'start/portal-build.ts': ['...process.env'],
  'start/with-database.ts': ['...process.env'],
}

const isTestFile = (file: string) =>
  /\.test\.tsx?$/.test(file) ||
  file.split(path.sep).includes('test') ||
  file.startsWith(`db${path.sep}generated`)

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return /\.(tsx?|mjs)$/.test(name) ? [full] : []
  })
}

const isProcessEnv = (node: ts.Node): node is ts.PropertyAccessExpression =>
  ts.isPropertyAccessExpression(node) &&
  ts.isIdentifier(node.expression) &&
  node.expression.text === 'process' &&
  node.name.text === 'env'

/** What the code does with each `process.env`: `read X`, `write X`, `delete X`, `...process.env`, or `process.env` (the whole). */
function envUses(code: string, fileName = 'file.ts'): string[] {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true)
  const uses: string[] = []
  const visit = (node: ts.Node) => {
    if (isProcessEnv(node)) uses.push(describeUse(node))
    ts.forEachChild(node, visit)
  }
  visit(source)
  return uses
}

function describeUse(env: ts.PropertyAccessExpression): string {
  const parent = env.parent
  if (ts.isSpreadAssignment(parent) || ts.isSpreadElement(parent)) return '...process.env'
  const member = ts.isPropertyAccessExpression(parent)
    ? parent.name.text
    : ts.isElementAccessExpression(parent)
      ? parent.argumentExpression.getText()
      : undefined
  if (member === undefined) return 'process.env'
  const outer = parent.parent
  if (ts.isDeleteExpression(outer)) return `delete ${member}`
  const assigned =
    ts.isBinaryExpression(outer) &&
    outer.left === parent &&
    outer.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
    outer.operatorToken.kind <= ts.SyntaxKind.LastAssignment
  return `${assigned ? 'write' : 'read'} ${member}`
}

describe('process.env', () => {
  it('is used only where the list above says, for its reason', () => {
    const found: Record<string, string[]> = {}
    for (const file of sourceFiles(SRC)) {
      const relative = path.relative(SRC, file)
      if (isTestFile(relative)) continue
      const uses = envUses(readFileSync(file, 'utf8'), file)
      if (uses.length > 0) found[relative.split(path.sep).join('/')] = uses
    }
    expect(found).toEqual(ALLOWED)
  })

  it('the check tells reads, writes, deletions, spreads and the whole environment apart', () => {
    const code = [
      'const a = process.env.WEB_API_ONLY',
      "const b = process.env['NODE_ENV']",
      'process.env.NEXTAUTH_URL = url',
      'delete process.env.NFT_PARENT_PID',
      'spawn(cmd, { env: { ...process.env } })',
      'function f(env = process.env) {}',
      // Code in a string (the docs page's examples) is no use.
      'const example = `apiKey: process.env.NFT_API_KEY`',
    ].join('\n')
    expect(envUses(code)).toEqual([
      'read WEB_API_ONLY',
      "read 'NODE_ENV'",
      'write NEXTAUTH_URL',
      'delete NFT_PARENT_PID',
      '...process.env',
      'process.env',
    ])
  })
})
