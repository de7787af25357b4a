import { describe, expect, it } from 'vitest'
import { cutText, displayText, isVisible, limitMarks, MAX_MARKS } from './display-text'

describe('isVisible', () => {
  it('is false for text of invisible characters only', () => {
    for (const text of [
      '',
      '   ',
      '\u200b\u200b\u2060\ufeff\u200d',
      '\u202e\u202c\u2066\u2069',
      '\u3164\u115f\u1160\uffa0\u2800',
      '\u0301\u0336',
      '\u00a0\u3000\u2028',
      '\u{e0041}\u{e0042}',
    ])
      expect(isVisible(text), JSON.stringify(text)).toBe(false)
  })

  it('is true for any visible character, in any script', () => {
    for (const text of ['a', '\u200b#1', 'שלום', 'مرحبا', '漢字', '🦄', 'Z\u0336'])
      expect(isVisible(text), JSON.stringify(text)).toBe(true)
  })
})

describe('limitMarks', () => {
  it(`keeps ${MAX_MARKS} combining marks on a character and drops the rest`, () => {
    const zalgo = `Z${'\u0336\u0489\u030d\u0344'.repeat(240)}o`
    expect(limitMarks(zalgo)).toBe('Z\u0336\u0489\u030d\u0344o')
  })

  it('leaves the marks of real scripts alone', () => {
    for (const text of ['Tiếng Việt', 'בְּרֵאשִׁית', 'ภาษาไทย', 'देवनागरी', 'e\u0301'])
      expect(limitMarks(text)).toBe(text)
  })
})

describe('cutText', () => {
  it('cuts by characters as read, never inside an emoji or a letter with its marks', () => {
    expect(cutText('abcdef', 6)).toBe('abcdef')
    expect(cutText('abcdefg', 6)).toBe('abcdef…')
    expect(cutText('🦄🦄🦄', 2)).toBe('🦄🦄…')
    expect(cutText('👩‍👩‍👧‍👦x', 1)).toBe('👩‍👩‍👧‍👦…')
    expect(cutText('e\u0301e\u0301e\u0301', 2)).toBe('e\u0301e\u0301…')
  })
})

describe('displayText', () => {
  it('is null for what cannot be seen, so that the caller shows its fallback', () => {
    expect(displayText(undefined)).toBeNull()
    expect(displayText(null)).toBeNull()
    expect(displayText('')).toBeNull()
    expect(displayText('\u200b\u200d')).toBeNull()
  })

  it('keeps text whole (bidi controls too: the <bdi> it is shown in isolates them), marks limited, cut when asked', () => {
    expect(displayText('Spoof\u202e1234')).toBe('Spoof\u202e1234')
    expect(displayText('W'.repeat(1000), 100)).toBe(`${'W'.repeat(100)}…`)
    expect(displayText(`Z${'\u0336'.repeat(500)}`)).toBe(`Z${'\u0336'.repeat(MAX_MARKS)}`)
  })
})
