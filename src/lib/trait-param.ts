/**
 * One `trait=Type:Value` parameter of a collection's NFT list (docs/api.md,
 * "Traits"): split at the first ':'; and one `trait_type` of its traits. Shared with the try page, which refuses
 * what the API would answer 400 to.
 */

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
  const colon = param.indexOf(':')
  if (colon < 0) return 'must be Type:Value (a trait type, a colon, a value)'
  const type = param.slice(0, colon)
  if (type === '') return 'must name a trait type before the colon'
  const typeProblem = traitTypeProblem(type)
  if (typeProblem) return typeProblem
  if ([...param.slice(colon + 1)].length > TRAIT_FILTER_LIMITS.valueChars)
    return `value must be at most ${TRAIT_FILTER_LIMITS.valueChars.toLocaleString('en-US')} characters`
  if (param.includes('\u0000')) return 'must not contain NUL characters'
  return undefined
}
