/** Parsing `trait=Type:Value` (docs/api.md, "Traits"): pure functions, no database. */
import { describe, expect, it } from 'vitest'
import { traitParam } from '@/client/trait-param'
import { validateParams } from '@/components/try/endpoints'
import { splitTraitParam, traitParamProblem } from '@/lib/trait-param'
import { containmentDocuments, traitFilters } from './trait-filter'

describe('trait parameters', () => {
  it('split at the first colon and group values by type, in first-seen order', () => {
    expect(traitFilters(['Hat:Cap', 'Eyes:a:b', 'Hat:Crown', 'Note:'])).toEqual([
      { trait_type: 'Hat', values: ['"Cap"', '"Crown"'] },
      { trait_type: 'Eyes', values: ['"a:b"'] },
      { trait_type: 'Note', values: ['""'] },
    ])
  })

  it('end the type at the first colon not escaped: \\: is a colon and \\\\ a backslash in the type', () => {
    expect(splitTraitParam('Mouth\\:Style:a:b')).toEqual({ type: 'Mouth:Style', value: 'a:b' })
    expect(splitTraitParam('C\\:\\\\dir:x')).toEqual({ type: 'C:\\dir', value: 'x' })
    // Any other backslash is itself, in the type and in the value.
    expect(splitTraitParam('a\\b:\\:')).toEqual({ type: 'a\\b', value: '\\:' })
    expect(splitTraitParam('Only\\:escaped')).toBeUndefined()
    for (const [type, value] of [
      ['Kind:Sub', 'x'],
      ['C:\\', ':'],
      ['\\\\:', 'v\\'],
      ['Plain', ''],
    ])
      expect(splitTraitParam(traitParam(type!, value!)), type).toEqual({ type, value })
    expect(traitParam('Hat', 'Cap')).toBe('Hat:Cap')
    expect(traitFilters(['Mouth\\:Style:a', 'Mouth:Style'])).toEqual([
      { trait_type: 'Mouth:Style', values: ['"a"'] },
      { trait_type: 'Mouth', values: ['"Style"'] },
    ])
  })

  it('match a value as its string and as the number or boolean it spells, exactly as spelled', () => {
    expect(traitFilters(['Level:3'])[0]!.values).toEqual(['"3"', '3'])
    expect(traitFilters(['Level:-2.5e3'])[0]!.values).toEqual(['"-2.5e3"', '-2.5e3'])
    expect(traitFilters(['Shiny:true'])[0]!.values).toEqual(['"true"', 'true'])
    // Numbers a double would round: kept as written, so jsonb compares them exactly.
    expect(traitFilters(['Level:9007199254740993'])[0]!.values).toEqual([
      '"9007199254740993"',
      '9007199254740993',
    ])
    expect(traitFilters(['Level:1e-400'])[0]!.values).toEqual(['"1e-400"', '1e-400'])
    // Not JSON numbers, or none PostgreSQL can store: kept as strings only.
    for (const text of ['03', '+3', '.5', '1.', 'Infinity', 'NaN', '0x10', ' 3', '1e-16384', '1e131072'])
      expect(traitFilters([`Level:${text}`])[0]!.values, text).toEqual([JSON.stringify(text)])
    expect(containmentDocuments({ trait_type: 'Le"vel', values: ['"3"', '3'] })).toEqual([
      '[{"trait_type":"Le\\"vel","value":"3"}]',
      '[{"trait_type":"Le\\"vel","value":3}]',
    ])
  })

  it('refuse what the API answers 400 to', () => {
    expect(traitParamProblem('Hat:Cap')).toBeUndefined()
    expect(traitParamProblem(`${'T'.repeat(256)}:${'v'.repeat(1_024)}`)).toBeUndefined()
    for (const bad of [
      'NoColon',
      'Escaped\\:only',
      '\\:',
      ':Cap',
      `${'T'.repeat(257)}:v`,
      `T:${'v'.repeat(1_025)}`,
      'T:\u0000',
    ])
      expect(traitParamProblem(bad), bad).toBeDefined()
  })

  it('are checked the same way on the try page', () => {
    const endpoint = {
      id: 'nfts',
      method: 'GET' as const,
      path: '/v1/collections/{address}/nfts',
      summary: '',
      params: [{ name: 'trait', in: 'query' as const, required: false, type: 'array' }],
      together: [],
    }
    expect(validateParams(endpoint, { trait: 'Hat:Cap' })).toEqual({})
    expect(validateParams(endpoint, { trait: 'NoColon' }).trait).toMatch(/Type:Value/)
  })
})
