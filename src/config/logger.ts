/**
 * Structured logs (pino) for every process. Secrets never reach a log line:
 * credentials are redacted wherever they could appear, and request logging
 * records the path without the query string.
 */
import pino from 'pino'

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

export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    base: options.name ? { proc: options.name } : undefined,
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  })
}
