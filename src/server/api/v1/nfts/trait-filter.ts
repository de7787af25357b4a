/**
 * `trait=Type:Value` on a collection's NFT list (docs/api.md, "Traits"):
 * split at the first colon not escaped (splitTraitParam, `\:` in the type);
 * the type is matched exactly, the value as the
 * string it is, and also as the number or boolean it spells (`Level:3`
 * matches 3 and "3"; `Shiny:true` matches true and "true"). Several values
 * of one type: any of them; several types: all of them. The parameters were
 * checked by the input schema (src/lib/trait-param.ts).
 */

import { splitTraitParam } from '@/lib/trait-param'

export interface TraitFilter {
  trait_type: string
  /** The JSON values the filter matches, as JSON text: a number as the parameter spells it, never rounded. */
  values: string[]
}

/** A JSON number exactly as JSON writes one (no leading '+', no leading zeros, no bare '.'). */
const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/

/**
 * PostgreSQL's numeric (which jsonb numbers are) holds at most 131,072 digits before the point
 * and 16,383 after: a number spelled beyond that is no stored value (and would fail the query).
 */
function storableNumber(text: string): boolean {
  const parts = JSON_NUMBER.exec(text)
  if (!parts) return false
  const integerDigits = parts[1]!.length
  const fractionDigits = parts[2]?.length ?? 0
  const exponent = Number(parts[3] ?? 0)
  return fractionDigits - exponent <= 16_383 && integerDigits + exponent <= 131_072
}

/** The valid parameters grouped by trait type, in first-seen order; each value with the JSON values it matches. */
export function traitFilters(params: readonly string[]): TraitFilter[] {
  const byType = new Map<string, TraitFilter>()
  for (const param of params) {
    // Checked by the input schema: every parameter splits.
    const { type, value: text } = splitTraitParam(param)!
    const filter = byType.get(type) ?? { trait_type: type, values: [] }
    byType.set(type, filter)
    filter.values.push(JSON.stringify(text))
    // The number or boolean it spells, as its own JSON text: jsonb compares numbers exactly.
    if (storableNumber(text) || text === 'true' || text === 'false') filter.values.push(text)
  }
  return [...byType.values()]
}

/** jsonb containment documents: a token matches the filter when its attributes contain any of them. */
export function containmentDocuments(filter: TraitFilter): string[] {
  const type = JSON.stringify(filter.trait_type)
  return filter.values.map((value) => `[{"trait_type":${type},"value":${value}}]`)
}
