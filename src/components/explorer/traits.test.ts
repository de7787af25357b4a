import { describe, expect, it } from 'vitest'
import { traitOptions, traitPicked } from './traits'

const type = (trait_type: string, values: [string | number | boolean, number][]) => ({
  trait_type,
  token_count: values.reduce((n, [, c]) => n + c, 0),
  missing_count: 0,
  value_count: values.length,
  values: values.map(([value, token_count]) => ({ value, token_count })),
  values_omitted: 0,
})

describe('traitOptions', () => {
  it('is one choice per filter: values a filter cannot tell apart are counted together', () => {
    expect(
      traitOptions(
        type('Level', [
          ['1', 3],
          [1, 2],
          [true, 1],
          ['true', 1],
          ['x', 1],
        ]),
      ),
    ).toEqual([
      { key: '1', label: '1', filter: 'Level:1', tokens: 5 },
      { key: 'true', label: 'true', filter: 'Level:true', tokens: 2 },
      { key: 'x', label: 'x', filter: 'Level:x', tokens: 1 },
    ])
  })

  it("escapes a type's colons and backslashes in its filter; offers none for the empty type", () => {
    expect(traitOptions(type('Kind:Sub', [['x', 1]]))).toEqual([
      { key: 'x', label: 'x', filter: 'Kind\\:Sub:x', tokens: 1 },
    ])
    expect(traitOptions(type('C:\\dir', [['a:b', 1]]))[0]!.filter).toBe('C\\:\\\\dir:a:b')
    expect(traitOptions(type('', [['x', 1]]))).toEqual([{ key: 'x', label: 'x', filter: null, tokens: 1 }])
  })

  it('keeps a value with colons whole (the filter splits at the first colon only)', () => {
    expect(traitOptions(type('Time', [['12:30', 1]]))[0]!.filter).toBe('Time:12:30')
  })
})

describe('traitPicked', () => {
  it('is whether a filter names the type: the part before its first colon not escaped, exactly', () => {
    expect(traitPicked('Hat', ['Hat:Cap'])).toBe(true)
    expect(traitPicked('Hat', ['Hat:a:b'])).toBe(true)
    expect(traitPicked('Ha', ['Hat:Cap'])).toBe(false)
    expect(traitPicked('hat', ['Hat:Cap'])).toBe(false)
    expect(traitPicked('Hat', [])).toBe(false)
    // A type with a colon is named with it escaped; no filter names the empty type.
    expect(traitPicked('Kind:Sub', ['Kind\\:Sub:x'])).toBe(true)
    expect(traitPicked('Kind:Sub', ['Kind:Sub:x'])).toBe(false)
    expect(traitPicked('Kind', ['Kind:Sub:x'])).toBe(true)
    expect(traitPicked('', [':x'])).toBe(false)
  })
})
