/**
 * Structured logs (pino) for every process. Secrets never reach a log line:
 * credentials are redacted wherever they could appear, and request logging
 * records the path without the query string.
 *
 * Format (docs/operations.md, "Logs"): JSON lines, one object per line, for
 * log collectors, pipes and files; readable coloured lines (pino-pretty) when
 * the output is a terminal. pino-pretty runs as a stream in the process, not
 * as a pino transport: a transport's worker thread loads its own files, which
 * the indexer's esbuild bundle does not carry, and writes asynchronously, so
 * the last line before process.exit could be lost.
 */
import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import { format, stripVTControlCharacters } from 'node:util'
import pino from 'pino'
import pretty from 'pino-pretty'

export type Logger = pino.Logger

const REDACT = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'cookie',
  '*.cookie',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'apiKey',
  '*.apiKey',
  'password',
  '*.password',
]

export type LogFormat = 'json' | 'pretty'

/** Readable lines for a person at a terminal; JSON lines everywhere else. */
export function logFormat(output: { isTTY?: boolean }): LogFormat {
  return output.isTTY === true ? 'pretty' : 'json'
}

export interface LoggerOptions {
  level?: string
  name?: string
  /** Where lines go; default stdout. Its isTTY picks the format. */
  output?: NodeJS.WritableStream & { isTTY?: boolean }
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const settings: pino.LoggerOptions = {
    level: options.level ?? 'info',
    base: options.name ? { proc: options.name } : undefined,
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  }
  const output = options.output ?? process.stdout
  if (logFormat(output) === 'pretty') {
    // Synchronous: a fatal line written just before process.exit still reaches the terminal.
    const stream = pretty({
      destination: options.output ?? 1,
      sync: true,
      colorize: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
    })
    return pino(settings, stream)
  }
  return options.output ? pino(settings, options.output) : pino(settings)
}

/*
 * Output that does not come from pino would break a stream of JSON lines:
 * Next.js prints its start-up and error messages with console ("✓ Running
 * next.config.mjs took 15ms"), and `next build` writes its progress to its
 * stdout. In JSON format both become log records (`source` says where they
 * came from); on a terminal they are left as they are.
 */

/** A line of someone else's output as a log message: colours and Next.js's status mark removed. */
export function plainLine(text: string): string {
  return stripVTControlCharacters(text)
    .replace(/^\s*[✓○●⨯⚠▲»]\s+/u, '')
    .trim()
}

type ConsoleMethod = 'log' | 'info' | 'debug' | 'warn' | 'error'
const CONSOLE_LEVELS: Record<ConsoleMethod, 'info' | 'debug' | 'warn' | 'error'> = {
  log: 'info',
  info: 'info',
  debug: 'debug',
  warn: 'warn',
  error: 'error',
}

/**
 * In JSON format, console output of the process (libraries that print, such as
 * Next.js) goes through `logger` as records with `source: 'console'`; an Error
 * among the arguments becomes the record's `err` (its message stays in the line).
 * Node's own warnings (deprecations, experimental features), which it would
 * print through console.error, become one `warn` record each with
 * `source: 'node'`. Returns a function that puts both back.
 */
export function captureConsole(logger: Logger, output: { isTTY?: boolean } = process.stdout): () => void {
  if (logFormat(output) !== 'json') return () => {}
  const nodeWarningListeners = process.listeners('warning')
  process.removeAllListeners('warning')
  const onWarning = (warning: Error & { code?: string }) =>
    logger.warn({ source: 'node', warning: warning.name, code: warning.code }, warning.message)
  process.on('warning', onWarning)
  const saved = new Map((Object.keys(CONSOLE_LEVELS) as ConsoleMethod[]).map((m) => [m, console[m]]))
  for (const method of saved.keys()) {
    const level = CONSOLE_LEVELS[method]
    console[method] = (...args: unknown[]) => {
      // An error's message in the line, its stack in `err`.
      const err = args.find((a) => a instanceof Error)
      const text = plainLine(format(...args.map((a) => (a instanceof Error ? a.message : a))))
      if (text) logger[level]({ source: 'console', ...(err ? { err } : {}) }, text)
    }
  }
  return () => {
    for (const [method, original] of saved) console[method] = original
    process.off('warning', onWarning)
    for (const listener of nodeWarningListeners) process.on('warning', listener)
  }
}

/** Each non-empty line of a child process's output stream as a log record (JSON format only). */
export function logOutputLines(
  logger: Logger,
  stream: Readable,
  source: string,
  level: 'info' | 'warn' = 'info',
): void {
  createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
    const text = plainLine(line)
    if (text) logger[level]({ source }, text)
  })
}
