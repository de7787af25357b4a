/**
 * Runs a tRPC procedure for the REST layer: its middlewares in order (the
 * input parser, the output parser, the resolver), with the
 * options and result shapes tRPC's own caller uses, so a procedure behaves
 * the same here and through tRPC's adapters.
 *
 * Why not tRPC's caller: its published build copies the call's options at
 * every middleware level, and the context at every `next({ ctx })`, with a
 * transpiled spread helper that defines each property one by one. Measured
 * on GET /v1/indexer/status in-process (no sockets): 110 µs per request
 * through the caller, 78 µs through this runner; most of the difference was
 * that helper and the garbage it left (docs/api.md, "The request path").
 *
 * Input levels of zod schemas are parsed here, synchronously: tRPC's input
 * middleware awaits the schema's `parseAsync`, whose asynchronous run left
 * about 2 kB of garbage per request and takes longer than `parse` (bench/RESULTS.md,
 * "The request path's allocations"). A schema that turns
 * out to need an asynchronous run (an async refinement) gets `parseAsync`.
 *
 * Library internals: reads `procedure._def` (middlewares, inputs, meta, type,
 * output) and each middleware's `_type`. call-procedure.test.ts, which compares
 * this runner with tRPC's caller, is the upgrade gate (docs/api.md).
 */
import { type AnyTRPCProcedure, getTRPCErrorFromUnknown, TRPCError } from '@trpc/server'
import { z } from 'zod'
import { isUncheckedResponseSchema } from './response-schema'

/** A middleware's result, as tRPC's middlewares return it. */
type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: unknown }

interface NextOptions {
  ctx?: object
  input?: unknown
  getRawInput?: () => Promise<unknown>
}

type Middleware = ((opts: object) => Promise<MiddlewareResult>) & { _type?: string }

interface ProcedureDef {
  middlewares: Middleware[]
  /** The parser of each input level, in the order of the levels. */
  inputs: unknown[]
  meta: unknown
  type: 'query' | 'mutation' | 'subscription'
  output?: unknown
}

/** A level this runner applies itself: an input parsed by a zod schema. */
interface ZodInputLevel {
  schema: z.ZodType
}

type Level = Middleware | ZodInputLevel

/**
 * A procedure's levels as this runner calls them. The output level is
 * left out when its schema's parse returns its input (production,
 * responseSchema, ./response-schema.ts): it would copy the result and
 * change nothing. Input levels of zod schemas become ZodInputLevels.
 */
function levelsOf(def: ProcedureDef): Level[] {
  let levels = runnable.get(def)
  if (!levels) {
    const kept = isUncheckedResponseSchema(def.output)
      ? def.middlewares.filter((m) => m._type !== 'output')
      : def.middlewares
    // tRPC adds one input level per `.input()`, with its parser at the same place in `inputs`.
    const inputLevels = kept.filter((m) => m._type === 'input').length
    let input = 0
    levels =
      inputLevels === def.inputs.length
        ? kept.map((m) => {
            if (m._type !== 'input') return m
            const schema = def.inputs[input++]
            return schema instanceof z.ZodType ? { schema } : m
          })
        : kept
    runnable.set(def, levels)
  }
  return levels
}

const runnable = new WeakMap<ProcedureDef, Level[]>()

/** What tRPC's input level hands on: the parsed input, merged over an earlier level's object input. */
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Schemas that needed an asynchronous run once: parsed with parseAsync from then on. */
const asyncSchemas = new WeakSet<z.ZodType>()

/**
 * The schema's parse, or its parseAsync when the schema needs an asynchronous run. Zod tells
 * that only by refusing a synchronous parse, after running the checks before the async one:
 * the first parse of such a schema runs those checks twice, the later ones once.
 */
function parseInput(schema: z.ZodType, raw: unknown): unknown {
  if (asyncSchemas.has(schema)) return schema.parseAsync(raw)
  try {
    return schema.parse(raw)
  } catch (err) {
    if (!(err instanceof z.core.$ZodAsyncError)) throw err
    asyncSchemas.add(schema)
    return schema.parseAsync(raw)
  }
}

export async function callProcedure(
  procedure: AnyTRPCProcedure,
  path: string,
  ctx: object,
  input: unknown,
): Promise<unknown> {
  const def = procedure._def as unknown as ProcedureDef
  const levels = levelsOf(def)
  const run = async (
    index: number,
    context: object,
    parsedInput: unknown,
    getRawInput: () => Promise<unknown>,
  ): Promise<MiddlewareResult> => {
    const level = levels[index]!
    try {
      if ('schema' in level) {
        const raw = await getRawInput()
        let parsed: unknown
        try {
          parsed = parseInput(level.schema, raw)
          if (parsed instanceof Promise) parsed = await parsed
        } catch (cause) {
          // A refused input fails as in tRPC's input level.
          throw new TRPCError({ code: 'BAD_REQUEST', cause })
        }
        const merged = isObject(parsedInput) && isObject(parsed) ? { ...parsedInput, ...parsed } : parsed
        return run(index + 1, context, merged, getRawInput)
      }
      return await level({
        ctx: context,
        path,
        type: def.type,
        getRawInput,
        input: parsedInput,
        meta: def.meta,
        signal: undefined,
        next: (next?: NextOptions) =>
          run(
            index + 1,
            next?.ctx ? { ...context, ...next.ctx } : context,
            next && 'input' in next ? next.input : parsedInput,
            next?.getRawInput ?? getRawInput,
          ),
      })
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause) }
    }
  }
  const result = await run(0, ctx, undefined, () => Promise.resolve(input))
  if (!result.ok) throw result.error
  return result.data
}
