/**
 * The choices of a collection's trait filters (docs/explorer.md, "Hostile input"), from a
 * /traits answer. Pure, so it is unit-tested.
 */
import { type ResponseOf, traitParam } from '@/client'
import { splitTraitParam } from '@/lib/trait-param'

type TraitType = ResponseOf<'/v1/collections/{address}/traits'>['data']['trait_types'][number]

/** Choices of a type shown when it is opened; the rest behind "Show all". */
export const VALUES_SHOWN = 50

export interface TraitOption {
  /** Unique within its type. */
  key: string
  /** The value as the filter spells it. */
  label: string
  /** The `trait` parameter (`Type:Value`); null when no filter can name the type (an empty one). */
  filter: string | null
  /** Tokens with the value: the sum of the counts of the values the choice stands for. */
  tokens: number
}

/**
 * One choice per filter: `trait=Type:Value` matches a value as the string it is and as the number
 * or boolean it spells, so the number 1 and the string "1" — two values in /traits — are one
 * choice, counted together (a token holding both counts twice). A type's colons are escaped in
 * the filter (traitParam); only an empty type cannot be named: its values are listed without one.
 */
export function traitOptions(type: TraitType): TraitOption[] {
  const nameable = type.trait_type !== ''
  const byLabel = new Map<string, TraitOption>()
  for (const v of type.values) {
    const label = String(v.value)
    const option = byLabel.get(label)
    if (option) option.tokens += v.token_count
    else
      byLabel.set(label, {
        key: label,
        label,
        filter: nameable ? traitParam(type.trait_type, label) : null,
        tokens: v.token_count,
      })
  }
  return [...byLabel.values()]
}

/**
 * Whether a `trait` filter among `selected` names this type: its values are then read and shown
 * open. Never for a type no filter can name.
 */
export function traitPicked(traitType: string, selected: string[]): boolean {
  if (traitType === '') return false
  return selected.some((filter) => splitTraitParam(filter)?.type === traitType)
}
