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
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
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
