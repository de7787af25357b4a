/**
 * `trait=Type:Value` on a collection's NFT list (docs/api.md, "Traits"):
 * split at the first ':'; the type is matched exactly, the value as the
 * string it is, and also as the number or boolean it spells (`Level:3`
 * matches 3 and "3"; `Shiny:true` matches true and "true"). Several values
 * of one type: any of them; several types: all of them.
 */

export const TRAIT_FILTER_LIMITS = { params: 20, typeChars: 256, valueChars: 1_024 } as const

export interface TraitFilter {
  trait_type: string
  values: Array<string | number | boolean>
}

/** A JSON number exactly as JSON writes one (no leading '+', no leading zeros, no bare '.'). */
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/

/** Why one `trait` parameter is not valid, or undefined when it is. */
export function traitParamProblem(param: string): string | undefined {
  const colon = param.indexOf(':')
  if (colon < 0) return 'must be Type:Value (a trait type, a colon, a value)'
  const type = param.slice(0, colon)
  if (type === '') return 'must name a trait type before the colon'
  if ([...type].length > TRAIT_FILTER_LIMITS.typeChars)
    return `trait type must be at most ${TRAIT_FILTER_LIMITS.typeChars} characters`
  if ([...param.slice(colon + 1)].length > TRAIT_FILTER_LIMITS.valueChars)
    return `value must be at most ${TRAIT_FILTER_LIMITS.valueChars.toLocaleString('en-US')} characters`
  if (param.includes('\u0000')) return 'must not contain NUL characters'
  return undefined
}

/** The valid parameters grouped by trait type, in first-seen order; each value with the JSON values it matches. */
export function traitFilters(params: readonly string[]): TraitFilter[] {
  const byType = new Map<string, TraitFilter>()
  for (const param of params) {
    const colon = param.indexOf(':')
    const type = param.slice(0, colon)
    const text = param.slice(colon + 1)
    const filter = byType.get(type) ?? { trait_type: type, values: [] }
    byType.set(type, filter)
    filter.values.push(text)
    if (JSON_NUMBER.test(text)) {
      const n = Number(text)
      if (Number.isFinite(n)) filter.values.push(n)
    }
    if (text === 'true' || text === 'false') filter.values.push(text === 'true')
  }
  return [...byType.values()]
}

/** jsonb containment documents: a token matches the filter when its attributes contain any of them. */
export function containmentDocuments(filter: TraitFilter): string[] {
  return filter.values.map((value) => JSON.stringify([{ trait_type: filter.trait_type, value }]))
}
