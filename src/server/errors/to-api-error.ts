/**
 * Turns anything a procedure (or the REST adapter) throws into an ApiError:
 * validation failures become 400 INVALID_ARGUMENT naming the parameter,
 * an unreachable database or a statement past its time limit becomes 503,
 * everything unexpected becomes a bare
 * 500 INTERNAL_ERROR. The original error is kept as `cause` for the log only.
 */
import { TRPCError } from '@trpc/server'
import { ZodError, type z } from 'zod'
import { isDatabaseUnavailable, isStatementTimeout } from '@/db/client'
import { HistoryRewrittenMeanwhile } from '@/db/queries/owners'
import { ApiError } from './api-error'

type Issue = z.core.$ZodIssue

/**
 * "unknown parameter 'sort'": the message of every refusal of unknown parameters. It names
 * three at most, each cut at 64 characters (they are the client's own text).
 */
export function unknownParametersMessage(names: readonly string[]): string {
  const listed = names
    .slice(0, 3)
    .map((name) => `'${name.slice(0, 64)}'`)
    .join(', ')
  return `unknown parameter${names.length > 1 ? 's' : ''} ${listed}`
}

function describeIssue(issue: Issue): string {
  if (issue.code === 'unrecognized_keys') return unknownParametersMessage(issue.keys)
  const name = issue.path.map(String).join('.') || 'request'
  return `${name}: ${issue.message}`
}

/** One readable sentence for a ZodError, e.g. "limit: must be at most 100". */
export function describeZodError(error: ZodError): string {
  return error.issues.slice(0, 3).map(describeIssue).join('; ')
}

function findCause<T>(err: unknown, match: (e: unknown) => e is T, depth = 0): T | undefined {
  if (match(err)) return err
  if (depth > 5 || !(err instanceof Error) || err.cause === undefined) return undefined
  return findCause(err.cause, match, depth + 1)
}

export function toApiError(err: unknown): ApiError {
  const api = findCause(err, (e): e is ApiError => e instanceof ApiError)
  if (api) return api
  const zod = findCause(err, (e): e is ZodError => e instanceof ZodError)
  if (zod) return new ApiError('INVALID_ARGUMENT', describeZodError(zod), { cause: err })
  if (err instanceof HistoryRewrittenMeanwhile) {
    return new ApiError(
      'SERVICE_UNAVAILABLE',
      'The confirmed history was rewritten (a reorganisation or a repair) while this snapshot was asked for; retry.',
      { cause: err },
    )
  }
  // query_canceled: a statement outlived DB_STATEMENT_TIMEOUT_MS (overload, a held lock). Not the request's fault.
  if (isStatementTimeout(err)) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The database did not answer in time; retry with backoff.', {
      cause: err,
    })
  }
  if (isDatabaseUnavailable(err)) {
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry with backoff.', {
      cause: err,
    })
  }
  if (err instanceof TRPCError) {
    switch (err.code) {
      case 'NOT_FOUND':
        return new ApiError('NOT_FOUND', 'No such endpoint.', { cause: err })
      case 'PARSE_ERROR':
      case 'BAD_REQUEST':
        return new ApiError('INVALID_ARGUMENT', 'The request is malformed.', { cause: err })
      case 'UNSUPPORTED_MEDIA_TYPE':
        return new ApiError('INVALID_ARGUMENT', 'The request body must be JSON.', { cause: err })
      case 'PAYLOAD_TOO_LARGE':
        return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is too large.', { cause: err })
      default:
        break
    }
  }
  return new ApiError('INTERNAL_ERROR', 'An unexpected error occurred.', { cause: err })
}
