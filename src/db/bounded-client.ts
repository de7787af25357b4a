/**
 * pg's Client whose client-side query bound (pg's `query_timeout`) also ends
 * the connection. pg alone answers the caller at the bound but keeps the
 * connection, whose server may still be frozen: the next query on it, or a
 * transaction's ROLLBACK, would wait again. Ending it lets the pool open a
 * fresh one (docs/operations.md, "Database connections").
 */
import pg from 'pg'

/** pg's error when a query outlives `query_timeout`. */
export const QUERY_TIMEOUT_MESSAGE = 'Query read timeout'

const isQueryTimeout = (err: unknown) => err instanceof Error && err.message === QUERY_TIMEOUT_MESSAGE

export class BoundedClient extends pg.Client {
  // pg's overloads (promise, callback, submittable) are all this one method.
  // biome-ignore lint/suspicious/noExplicitAny: forwards pg's own overloaded arguments and result
  override query(...args: any[]): any {
    const last = args.length - 1
    const callback = args[last]
    if (typeof callback === 'function') {
      args[last] = (err: unknown, result: unknown) => {
        this.endAfterTimeout(err)
        callback(err, result)
      }
    }
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const result = (super.query as (...a: any[]) => any)(...args)
    if (result instanceof Promise) result.catch((err: unknown) => this.endAfterTimeout(err))
    return result
  }

  private endAfterTimeout(err: unknown) {
    // With a query still active, end() destroys the socket at once rather than say goodbye.
    if (isQueryTimeout(err)) void this.end().catch(() => {})
  }
}
