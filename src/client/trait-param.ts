/**
 * The `trait=Type:Value` parameter of GET /v1/collections/{address}/nfts
 * (docs/api.md, "Traits"): the type ends at the first colon that is not
 * escaped, the value is the rest. The service reads parameters with
 * splitTraitParam; callers write them with traitParam.
 */

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

/** The `trait` parameter that names `type` and `value`: the type's colons and backslashes escaped. */
export function traitParam(type: string, value: string): string {
  return `${type.replace(/[\\:]/g, (c) => `\\${c}`)}:${value}`
}
