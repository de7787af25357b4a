/**
 * `trait=Type:Value` on a collection's NFT list (docs/api.md, "Traits"):
 * split at the first ':'; the type is matched exactly, the value as the
 * string it is, and also as the number or boolean it spells (`Level:3`
 * matches 3 and "3"; `Shiny:true` matches true and "true"). Several values
 * of one type: any of them; several types: all of them. The parameters were
 * checked by the input schema (src/lib/trait-param.ts).
 */

export interface TraitFilter {
  trait_type: string
  values: Array<string | number | boolean>
}

/** A JSON number exactly as JSON writes one (no leading '+', no leading zeros, no bare '.'). */
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/

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
