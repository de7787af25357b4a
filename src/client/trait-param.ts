/**
 * The `trait=Type:Value` parameter of GET /v1/collections/{address}/nfts
 * (docs/api.md, "Traits"): the type ends at the first colon that is not
 * escaped (`\:` is a colon, `\\` a backslash), the value is the rest.
 */

/** The `trait` parameter that names `type` and `value`: the type's colons and backslashes escaped. */
export function traitParam(type: string, value: string): string {
  return `${type.replace(/[\\:]/g, (c) => `\\${c}`)}:${value}`
}
