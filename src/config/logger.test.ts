/**
 * Log format (docs/operations.md, "Logs"): JSON lines unless the output is a
 * terminal, then pino-pretty's readable lines; redaction holds in both.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createLogger, logFormat } from './logger'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** A stream that keeps what is written, and says it is (or is not) a terminal. */
function capture(isTTY: boolean) {
  const chunks: string[] = []
  const stream = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk))
        done()
      },
    }),
    { isTTY },
  )
  return { stream, text: () => chunks.join('') }
}

describe('logFormat', () => {
  it('is pretty on a terminal and JSON everywhere else', () => {
    expect(logFormat({ isTTY: true })).toBe('pretty')
    expect(logFormat({ isTTY: false })).toBe('json')
    expect(logFormat({})).toBe('json')
  })
})

describe('createLogger', () => {
  it('writes one JSON object per line when the output is not a terminal, secrets redacted', () => {
    const out = capture(false)
    const logger = createLogger({ name: 'web', output: out.stream })
    logger.info({ token: 'nft_sk_secret', req: { headers: { authorization: 'Bearer x' } } }, 'first')
    logger.warn('second')
    const lines = out.text().trim().split('\n')
    expect(lines).toHaveLength(2)
    const [first, second] = lines.map((l) => JSON.parse(l))
    expect(first).toMatchObject({ level: 30, proc: 'web', msg: 'first', token: '[redacted]' })
    expect(first.req.headers.authorization).toBe('[redacted]')
    expect(second).toMatchObject({ level: 40, msg: 'second' })
    expect(out.text()).not.toContain('nft_sk_secret')
  })

  it('writes readable lines on a terminal, secrets still redacted', () => {
    const out = capture(true)
    const logger = createLogger({ name: 'indexer', output: out.stream })
    logger.info({ token: 'nft_sk_secret', block: 12 }, 'indexed')
    const text = out.text()
    expect(() => JSON.parse(text.split('\n')[0]!)).toThrow()
    expect(text).toMatch(/INFO.*indexed/)
    expect(text).toContain('[redacted]')
    expect(text).not.toContain('nft_sk_secret')
  })

  const program = [
    "const { createLogger } = await import('./src/config/logger.ts')",
    "createLogger({ name: 'web' }).info({ token: 'nft_sk_secret' }, 'hello')",
  ].join(';')
  const run = (command: string, args: string[]) =>
    execFileSync(command, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'info' } })

  it('a process whose stdout is a pipe logs JSON lines', () => {
    const out = run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program])
    expect(JSON.parse(out.trim())).toMatchObject({ msg: 'hello', proc: 'web', token: '[redacted]' })
  })

  it('a process whose stdout is a terminal (a pseudo-terminal from script(1)) logs readable lines', () => {
    const command = `'${process.execPath}' --import tsx --input-type=module -e "${program}"`
    const out = run('script', ['-qec', command, '/dev/null'])
    expect(out).toMatch(/INFO.*hello/)
    expect(out).not.toContain('{"level"')
    expect(out).toContain('[redacted]')
  })
})
