/**
 * One `trait=Type:Value` parameter of a collection's NFT list (docs/api.md,
 * "Traits"), read by splitTraitParam (the typed client writes one with
 * traitParam), and one `trait_type` of its traits: what the API answers 400
 * to. Shared with the try page, which refuses the same.
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

/**
 * A `trait` parameter's type and value, or undefined without a colon that ends the type. In the
 * type, `\:` is a colon and `\\` a backslash; any other backslash is itself, so a type with
 * neither reads as it did before there were escapes. The value is the rest, as it is.
 */
export function splitTraitParam(param: string): { type: string; value: string } | undefined {
  let type = ''
  for (let i = 0; i < param.length; i++) {
    const c = param[i]!
    const next = param[i + 1]
    if (c === '\\' && (next === ':' || next === '\\')) {
      type += next
      i++
    } else if (c === ':') return { type, value: param.slice(i + 1) }
    else type += c
  }
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
