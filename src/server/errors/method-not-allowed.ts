/**
 * 405 METHOD_NOT_ALLOWED, as every part of the web process answers it (/v1, its media, the
 * service's own documents, the pages and the route handlers under /api/): the path exists and
 * answers `methods`, not the one asked, which the error's message and its `Allow` header name.
 */
import { ApiError } from './api-error'

/** An `Allow` header of `methods`, and OPTIONS where the path answers OPTIONS too. */
export function allowHeader(methods: string[], options = true): string {
  return (options ? [...methods, 'OPTIONS'] : methods).join(', ')
}

/** "GET", "GET or HEAD", "GET, HEAD or POST". */
function oneOf(methods: string[]): string {
  return methods.length < 2 ? (methods[0] ?? '') : `${methods.slice(0, -1).join(', ')} or ${methods.at(-1)}`
}

export function methodNotAllowed(method: string | undefined, methods: string[], options = true): ApiError {
  return new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed here; use ${oneOf(methods)}.`, {
    headers: { Allow: allowHeader(methods, options) },
  })
}
