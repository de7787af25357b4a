/**
 * Runs a tRPC procedure for the REST layer: its middlewares in order (the
 * API tier's, the input parser, the output parser, the resolver), with the
 * options and result shapes tRPC's own caller uses, so a procedure behaves
 * the same here and through tRPC's adapters.
 *
 * Why not tRPC's caller: its published build copies the call's options at
 * every middleware level, and the context at every `next({ ctx })`, with a
 * transpiled spread helper that defines each property one by one, a cost
 * measured on every request (docs/api.md, "The request path, and what it costs").
 */
import { type AnyTRPCProcedure, getTRPCErrorFromUnknown } from '@trpc/server'
import { isUncheckedResponseSchema } from '@/server/api/trpc'

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
  meta: unknown
  type: 'query' | 'mutation' | 'subscription'
  output?: unknown
}

/**
 * A procedure's middlewares as this runner calls them. The output level is
 * left out when its schema's parse returns its input (production,
 * responseSchema in src/server/api/trpc.ts): it would copy the result and
 * change nothing.
 */
function middlewaresOf(def: ProcedureDef): Middleware[] {
  let list = runnable.get(def)
  if (!list) {
    list = isUncheckedResponseSchema(def.output)
      ? def.middlewares.filter((m) => m._type !== 'output')
      : def.middlewares
    runnable.set(def, list)
  }
  return list
}

const runnable = new WeakMap<ProcedureDef, Middleware[]>()

export async function callProcedure(
  procedure: AnyTRPCProcedure,
  path: string,
  ctx: object,
  input: unknown,
): Promise<unknown> {
  const def = procedure._def as unknown as ProcedureDef
  const middlewares = middlewaresOf(def)
  const run = async (
    index: number,
    context: object,
    parsedInput: unknown,
    getRawInput: () => Promise<unknown>,
  ): Promise<MiddlewareResult> => {
    try {
      return await middlewares[index]!({
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
