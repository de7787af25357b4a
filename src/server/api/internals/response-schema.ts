/**
 * The response schema of a /v1 procedure: `.output(responseSchema(page))`.
 * The schema is the contract — /openapi.json is generated from it and the
 * handler is typed by it — and tRPC parses every response against it. In
 * production that parse is skipped: it cost 15 % of a list endpoint's
 * throughput (docs/api.md, "The request path, and what it costs"). Neither
 * tRPC nor trpc-to-openapi has an option for this, hence a copy of the schema
 * (same definition, same OpenAPI component) with its own parse:
 *  - production: returns the response as it is;
 *  - development and tests: parses, and also refuses a response the parse
 *    would change (a key it would strip, a value it would transform), so what
 *    tests see is byte for byte what production sends. A refused response is
 *    the server's fault: a 500, never the 400 a client's bad parameter gets.
 *
 * Library internals: the copy is made from zod's `schema._zod.def`, and its
 * `parse`/`parseAsync` are replaced (docs/api.md, "Library internals and the
 * upgrade gate"; response-schema.test.ts is the gate).
 */
import { isDeepStrictEqual } from 'node:util'
import { z } from 'zod'
import { productionMode } from '@/config/env'
import { describeZodError } from '@/server/errors/to-api-error'

/**
 * A response that is not exactly its schema. Deliberately no ZodError in its cause chain: a
 * ZodError there is a bad parameter (400), and this is the server's own fault (500).
 */
export class ResponseSchemaViolation extends Error {
  override name = 'ResponseSchemaViolation'
}

export function responseSchema<T extends z.ZodType>(schema: T, validate = !productionMode()): T {
  const copies = validate ? checkedCopies : uncheckedCopies
  let copy = copies.get(schema)
  if (!copy) {
    // From the definition, not the schema: a plain clone() names the original as its parent,
    // and the JSON Schema conversion would then emit both under one component id.
    copy = schema.clone(schema._zod.def)
    const meta = z.globalRegistry.get(schema)
    if (meta) z.globalRegistry.add(copy, meta)
    const parse = validate ? (data: unknown) => parseUnchanged(schema, data) : (data: unknown) => data
    // tRPC calls parse, and parseAsync after a parse error without zod issues: both are replaced.
    copy.parse = parse
    copy.parseAsync = async (data: unknown) => parse(data)
    copies.set(schema, copy)
    if (!validate) unchecked.add(copy)
  }
  return copy as T
}

/** One copy per schema and mode: a page schema shared by two endpoints stays one OpenAPI component. */
const checkedCopies = new WeakMap<z.ZodType, z.ZodType>()
const uncheckedCopies = new WeakMap<z.ZodType, z.ZodType>()
const unchecked = new WeakSet<object>()

/** True for a responseSchema copy whose parse returns its input (production): running it changes nothing. */
export const isUncheckedResponseSchema = (schema: unknown): boolean =>
  typeof schema === 'object' && schema !== null && unchecked.has(schema)

function parseUnchanged<T extends z.ZodType>(schema: T, data: unknown): z.output<T> {
  const result = schema.safeParse(data)
  if (!result.success) {
    throw new ResponseSchemaViolation(`The response is off its schema: ${describeZodError(result.error)}`)
  }
  // Compared as JSON, as a client receives it (key order aside).
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(result.data)), JSON.parse(JSON.stringify(data)))) {
    throw new ResponseSchemaViolation('The response is not exactly its schema: parsing it would change it')
  }
  return result.data
}
