/**
 * Log format (docs/operations.md, "Logs"): JSON lines unless the output is a
 * terminal, then pino-pretty's readable lines; redaction holds in both.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { captureConsole, createLogger, logFormat, logOutputLines } from './logger'

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

describe('output that does not come from pino', () => {
  const records = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))

  it('console output becomes JSON records, colours and status marks removed, when the output is not a terminal', () => {
    const out = capture(false)
    const original = console.log
    const restore = captureConsole(createLogger({ name: 'web', output: out.stream }), out.stream)
    try {
      // Next.js's start-up line, as it prints it.
      console.log('\u001b[32m\u001b[1m✓\u001b[22m\u001b[39m Running next.config.mjs took 15ms')
      console.warn('\u001b[33m⚠\u001b[39m slow %s', 'page')
      console.error('render failed:', new Error('boom'))
      console.error(new Error('alone'))
      console.error('%s', new Error('formatted'))
      console.log('')
    } finally {
      restore()
    }
    const [start, warn, error, alone, formatted, ...rest] = records(out.text())
    expect(start).toMatchObject({
      level: 30,
      proc: 'web',
      source: 'console',
      msg: 'Running next.config.mjs took 15ms',
    })
    expect(warn).toMatchObject({ level: 40, msg: 'slow page' })
    expect(error).toMatchObject({ level: 50, msg: 'render failed: boom', err: { message: 'boom' } })
    expect(error.err.stack).toContain('logger.test.ts')
    expect(alone).toMatchObject({ level: 50, msg: 'alone', err: { message: 'alone' } })
    expect(formatted).toMatchObject({ msg: 'formatted' })
    expect(rest).toEqual([])
    expect(console.log).toBe(original)
  })

  it("Node's warnings become warn records, and its own printing comes back after", async () => {
    const out = capture(false)
    const nodeListeners = process.listeners('warning')
    const restore = captureConsole(createLogger({ name: 'indexer', output: out.stream }), out.stream)
    try {
      process.emitWarning('something odd', { type: 'DeprecationWarning', code: 'DEP0999' })
      await new Promise((resolve) => process.nextTick(resolve))
    } finally {
      restore()
    }
    expect(records(out.text())).toEqual([
      expect.objectContaining({
        level: 40,
        source: 'node',
        warning: 'DeprecationWarning',
        code: 'DEP0999',
        msg: 'something odd',
      }),
    ])
    expect(process.listeners('warning')).toEqual(nodeListeners)
  })

  it('leaves console alone on a terminal', () => {
    const out = capture(true)
    const log = console.log
    const restore = captureConsole(createLogger({ output: out.stream }), out.stream)
    expect(console.log).toBe(log)
    restore()
  })

  it("a child's output lines become records with their source", async () => {
    const out = capture(false)
    const child = new PassThrough()
    logOutputLines(createLogger({ name: 'start', output: out.stream }), child, 'next build')
    child.end(
      '\u001b[1m▲ Next.js 16\u001b[22m\n\n  Creating an optimized production build ...\r\n├ ƒ /portal\n',
    )
    await new Promise((r) => setImmediate(r))
    expect(records(out.text())).toEqual([
      expect.objectContaining({ level: 30, proc: 'start', source: 'next build', msg: 'Next.js 16' }),
      expect.objectContaining({ msg: 'Creating an optimized production build ...' }),
      expect.objectContaining({ msg: '├ ƒ /portal' }),
    ])
  })
})
