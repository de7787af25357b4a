import { type AnyTRPCProcedure, initTRPC, TRPCError } from '@trpc/server'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { callProcedure } from './call-procedure'
import { responseSchema } from './response-schema'

// A procedure with every kind of level the /v1 procedures have: a middleware that
// extends the context, an input parser, an output parser and the resolver.
const t = initTRPC.context<{ user?: string }>().meta<{ scope?: string }>().create()
const seen: unknown[] = []
const procedure = t.procedure
  .meta({ scope: 'read:status' })
  .use(({ ctx, meta, path, type, next }) => {
    seen.push({ meta, path, type })
    if (ctx.user === 'nobody') throw new TRPCError({ code: 'UNAUTHORIZED', message: 'no' })
    return next({ ctx: { greeting: `hello ${ctx.user}` } })
  })
  .input(z.strictObject({ n: z.coerce.number().int().max(10) }))
  .output(z.object({ text: z.string(), n: z.number() }))
  .query(({ ctx, input }) => {
    if (input.n === 7) throw new Error('seven')
    return { text: ctx.greeting, n: input.n * 2, extra: 'stripped by the output parser' }
  })
const router = t.router({ example: procedure })
const caller = t.createCallerFactory(router)

/** The outcome of a call: its data, or its error's class, code and cause. */
async function outcome(call: () => Promise<unknown>) {
  try {
    return { data: await call() }
  } catch (err) {
    const e = err as TRPCError
    return { error: e.constructor.name, code: e.code, message: e.message, cause: e.cause?.constructor.name }
  }
}

describe('callProcedure', () => {
  it("does what tRPC's own caller does, for results and every kind of failure", async () => {
    const cases: Array<[{ user?: string }, unknown]> = [
      [{ user: 'ada' }, { n: '3' }],
      [{ user: 'ada' }, { n: '11' }],
      [{ user: 'ada' }, { n: '3', typo: '1' }],
      [{ user: 'ada' }, { n: '7' }],
      [{ user: 'nobody' }, { n: '3' }],
    ]
    for (const [ctx, input] of cases) {
      const ours = await outcome(() => callProcedure(procedure, 'example', ctx, input))
      const theirs = await outcome(() => caller(ctx).example(input as never))
      expect(ours).toEqual(theirs)
    }
    expect(await outcome(() => callProcedure(procedure, 'example', { user: 'ada' }, { n: '3' }))).toEqual({
      data: { text: 'hello ada', n: 6 },
    })
    // Middlewares saw the same meta, path and type both ways.
    expect(new Set(seen.map((s) => JSON.stringify(s)))).toEqual(
      new Set([JSON.stringify({ meta: { scope: 'read:status' }, path: 'example', type: 'query' })]),
    )
  })
})

describe('callProcedure and the output level', () => {
  const output = z.object({ n: z.number() })
  const resolve = () => ({ n: 1, internal: 'kept when nothing parses' })
  it('runs an output parser that checks, and skips one that returns its input, with the same result as tRPC', async () => {
    for (const validate of [true, false]) {
      const p = t.procedure.output(responseSchema(output, validate)).query(resolve as never)
      const viaCaller = await outcome(() => t.createCallerFactory(t.router({ p }))({}).p())
      expect(await outcome(() => callProcedure(p, 'p', {}, undefined))).toEqual(viaCaller)
    }
    // Checked: refused (the response is not exactly its schema); unchecked: passed through as it is.
    const checked = t.procedure.output(responseSchema(output, true)).query(resolve as never)
    expect(await outcome(() => callProcedure(checked, 'p', {}, undefined))).toMatchObject({
      code: 'INTERNAL_SERVER_ERROR',
    })
    const unchecked = t.procedure.output(responseSchema(output, false)).query(resolve as never)
    expect(await outcome(() => callProcedure(unchecked, 'p', {}, undefined))).toEqual({ data: resolve() })
  })
})

describe('callProcedure and the input levels', () => {
  const viaCaller = (p: AnyTRPCProcedure, input: unknown) => {
    const call = t.createCallerFactory(t.router({ p }))({}) as unknown as {
      p(input: unknown): Promise<unknown>
    }
    return outcome(() => call.p(input))
  }

  it('parses as tRPC does: a schema that needs an asynchronous run, and two inputs merged in order', async () => {
    const checked: string[] = []
    // An async refinement: a synchronous parse cannot run it, the runner falls back to parseAsync.
    const slow = t.procedure
      .input(
        z.object({ id: z.string() }).refine(async (v) => {
          checked.push(v.id)
          return v.id !== 'bad'
        }, 'refused'),
      )
      .query(({ input }) => input)
    const merged = t.procedure
      .input(z.object({ a: z.coerce.number() }))
      .input(z.object({ b: z.string().default('b') }))
      .query(({ input }) => input)
    const cases: Array<[AnyTRPCProcedure, unknown]> = [
      [slow, { id: 'ok' }],
      [slow, { id: 'bad' }],
      [slow, { id: 3 }],
      [merged, { a: '2' }],
      [merged, { a: '2', b: 'x' }],
      [merged, { a: 'no' }],
      [merged, undefined],
    ]
    for (const [p, input] of cases) {
      expect(await outcome(() => callProcedure(p, 'p', {}, input))).toEqual(await viaCaller(p, input))
    }
    expect(await outcome(() => callProcedure(merged, 'p', {}, { a: '2' }))).toEqual({
      data: { a: 2, b: 'b' },
    })
    expect(await outcome(() => callProcedure(slow, 'p', {}, { id: 'bad' }))).toMatchObject({
      code: 'BAD_REQUEST',
      cause: 'ZodError',
    })
    // Once the runner knows the schema needs an asynchronous run, each call runs the check once, as tRPC's does.
    checked.length = 0
    await callProcedure(slow, 'p', {}, { id: 'ok' })
    await viaCaller(slow, { id: 'ok' })
    expect(checked).toEqual(['ok', 'ok'])
  })

  it('parses a zod input with its synchronous parse, where tRPC awaits parseAsync', async () => {
    const schema = z.object({ n: z.coerce.number() })
    let asyncRuns = 0
    const parseAsync = schema.parseAsync.bind(schema)
    schema.parseAsync = ((data: unknown) => {
      asyncRuns++
      return parseAsync(data)
    }) as typeof schema.parseAsync
    const p = t.procedure.input(schema).query(({ input }) => input)
    expect(await outcome(() => callProcedure(p, 'p', {}, { n: '4' }))).toEqual({ data: { n: 4 } })
    expect(asyncRuns).toBe(0)
    expect(await viaCaller(p, { n: '4' })).toEqual({ data: { n: 4 } })
    expect(asyncRuns).toBe(1)
  })
})
