/**
 * One `trait=Type:Value` parameter of a collection's NFT list (docs/api.md,
 * "Traits"; split by splitTraitParam of the typed client) and one
 * `trait_type` of its traits: what the API answers 400 to. Shared with the try
 * page, which refuses the same.
 */

import { splitTraitParam } from '@/client/trait-param'

export const TRAIT_FILTER_LIMITS = { params: 20, typeChars: 256, valueChars: 1_024 } as const

/** Why one trait type (a `trait_type` parameter of a collection's traits) is not valid, or undefined. */
export function traitTypeProblem(type: string): string | undefined {
  if (type === '') return 'must name a trait type'
  if ([...type].length > TRAIT_FILTER_LIMITS.typeChars)
    return `trait type must be at most ${TRAIT_FILTER_LIMITS.typeChars} characters`
  if (type.includes('\u0000')) return 'must not contain NUL characters'
  return undefined
}

/** Why one `trait` parameter is not valid, or undefined when it is. */
export function traitParamProblem(param: string): string | undefined {
  const split = splitTraitParam(param)
  if (!split) return 'must be Type:Value (a trait type, a colon, a value; a colon in the type written \\:)'
  if (split.type === '') return 'must name a trait type before the colon'
  const typeProblem = traitTypeProblem(split.type)
  if (typeProblem) return typeProblem
  if ([...split.value].length > TRAIT_FILTER_LIMITS.valueChars)
    return `value must be at most ${TRAIT_FILTER_LIMITS.valueChars.toLocaleString('en-US')} characters`
  if (param.includes('\u0000')) return 'must not contain NUL characters'
  return undefined
}
