import { describe, expect, it } from 'vitest'
import { sanitizeJson } from './document'
import {
  cleanValueText,
  METADATA_CAPS,
  normalizeAttributes,
  normalizeMetadata,
  wellFormed,
} from './normalize'

const parse = (json: string) => sanitizeJson(JSON.parse(json)) as Record<string, unknown>

describe('normalizeAttributes: the shapes seen on mainnet', () => {
  it("reads OpenSea's attributes array, with display_type", () => {
    expect(
      normalizeAttributes({
        attributes: [
          { trait_type: 'Background', value: 'Blue' },
          { trait_type: 'Level', value: 5, display_type: 'number' },
          { trait_type: 'Shiny', value: true },
          { trait_type: 'Birthday', value: 1546360800, display_type: 'date' },
        ],
      }),
    ).toEqual([
      { trait_type: 'Background', value: 'Blue' },
      { trait_type: 'Level', value: 5, display_type: 'number' },
      { trait_type: 'Shiny', value: true },
      { trait_type: 'Birthday', value: 1546360800, display_type: 'date' },
    ])
  })

  it('reads a traits array and the other spellings of the keys', () => {
    expect(
      normalizeAttributes({
        traits: [
          { traitType: 'Eyes', value: 'Laser' },
          { type: 'Hat', value: 'Cap', displayType: 'string' },
          { key: 'Mouth', value: 'Smile' },
          { name: 'Fur', value: 'Gold' },
          { trait_type: 'Rank', trait_value: 7 },
        ],
      }),
    ).toEqual([
      { trait_type: 'Eyes', value: 'Laser' },
      { trait_type: 'Hat', value: 'Cap', display_type: 'string' },
      { trait_type: 'Mouth', value: 'Smile' },
      { trait_type: 'Fur', value: 'Gold' },
      { trait_type: 'Rank', value: 7 },
    ])
  })

  it('reads a properties object: key -> value and key -> {value, …}', () => {
    expect(
      normalizeAttributes({
        properties: {
          Color: 'Red',
          Size: { value: 3, display_type: 'number' },
          Rarity: { name: 'Rarity', value: 'Rare', display_value: 'Rare!' },
          files: [{ uri: 'a.png' }],
          creators: { list: [] },
        },
      }),
    ).toEqual([
      { trait_type: 'Color', value: 'Red' },
      { trait_type: 'Size', value: 3, display_type: 'number' },
      { trait_type: 'Rarity', value: 'Rare' },
    ])
  })

  it('reads an attributes object as properties', () => {
    expect(normalizeAttributes({ attributes: { Eyes: 'Blue', Level: 2 } })).toEqual([
      { trait_type: 'Eyes', value: 'Blue' },
      { trait_type: 'Level', value: 2 },
    ])
  })

  it('takes the first shape that yields attributes: attributes, then traits, then properties', () => {
    expect(
      normalizeAttributes({
        attributes: [],
        traits: [{ trait_type: 'A', value: 'from traits' }],
        properties: { B: 'from properties' },
      }),
    ).toEqual([{ trait_type: 'A', value: 'from traits' }])
    expect(normalizeAttributes({ attributes: [{ value: 'no type' }], properties: { B: 'x' } })).toEqual([
      { trait_type: 'B', value: 'x' },
    ])
  })

  it('is null when the document declares none', () => {
    expect(normalizeAttributes({ name: 'x' })).toBeNull()
    expect(normalizeAttributes({ attributes: [] })).toBeNull()
    expect(normalizeAttributes({ attributes: 'Blue' })).toBeNull()
    expect(normalizeAttributes({ attributes: null })).toBeNull()
  })

  it('skips entries without a type or a scalar value', () => {
    expect(
      normalizeAttributes({
        attributes: [
          null,
          'Blue',
          42,
          [1, 2],
          { value: 'no type' },
          { trait_type: 'NoValue' },
          { trait_type: 'Null', value: null },
          { trait_type: 'Object', value: { nested: true } },
          { trait_type: 'Array', value: ['a'] },
          { trait_type: 'Empty', value: '   ' },
          { trait_type: '', value: 'empty type' },
          { trait_type: { x: 1 }, value: 'object type' },
          { trait_type: 7, value: 'numeric type' },
          { trait_type: 'Zero', value: 0 },
          { trait_type: 'False', value: false },
        ],
      }),
    ).toEqual([
      { trait_type: '7', value: 'numeric type' },
      { trait_type: 'Zero', value: 0 },
      { trait_type: 'False', value: false },
    ])
  })

  it('keeps several values of one trait type but drops repeated pairs', () => {
    expect(
      normalizeAttributes({
        attributes: [
          { trait_type: 'Accessory', value: 'Hat' },
          { trait_type: 'Accessory', value: 'Scarf' },
          { trait_type: 'Accessory', value: 'Hat' },
          { trait_type: 'Level', value: 1 },
          { trait_type: 'Level', value: '1' },
          { trait_type: 'Level', value: 1, display_type: 'number' },
        ],
      }),
    ).toEqual([
      { trait_type: 'Accessory', value: 'Hat' },
      { trait_type: 'Accessory', value: 'Scarf' },
      { trait_type: 'Level', value: 1 },
      { trait_type: 'Level', value: '1' },
    ])
  })
})

describe('normalizeMetadata: hostile documents are capped', () => {
  it('keeps at most 100 attributes, and looks at no more than 1,000 entries', () => {
    const many = Array.from({ length: 100_000 }, (_, i) => ({ trait_type: `T${i}`, value: i }))
    const attributes = normalizeAttributes({ attributes: many })!
    expect(attributes).toHaveLength(METADATA_CAPS.attributes)
    expect(attributes[99]).toEqual({ trait_type: 'T99', value: 99 })
    // 1,000 repeated pairs, then a new one: it is past the entries looked at.
    const repeated = [
      ...Array.from({ length: 1_000 }, () => ({ trait_type: 'Same', value: 'same' })),
      { trait_type: 'Late', value: 'late' },
    ]
    expect(normalizeAttributes({ attributes: repeated })).toEqual([{ trait_type: 'Same', value: 'same' }])
    const props = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`K${i}`, i]))
    expect(normalizeAttributes({ properties: props })).toHaveLength(100)
  })

  it('cuts megabyte strings to their caps, by characters, never inside one', () => {
    const mb = 'x'.repeat(1_048_576)
    const emoji = '😀'.repeat(600_000)
    const out = normalizeMetadata({
      description: mb,
      attributes: [
        { trait_type: mb, value: mb, display_type: mb },
        { trait_type: 'Emoji', value: emoji },
      ],
    })
    expect(out.description).toHaveLength(10_000)
    expect(out.attributes![0]!.trait_type).toHaveLength(256)
    expect(out.attributes![0]!.value).toHaveLength(1_024)
    expect(out.attributes![0]!.display_type).toHaveLength(64)
    const value = out.attributes![1]!.value as string
    expect([...value]).toHaveLength(1_024)
    expect(value).toBe(wellFormed(value))
  })

  it('drops control characters and NUL, pairs surrogates, trims', () => {
    expect(cleanValueText('  a\u0000b\u0007c\u007f\td\ne  ', 100)).toBe('abc\td\ne')
    expect(cleanValueText('\ud800x\udc00', 100)).toBe('\ufffdx\ufffd')
    expect(cleanValueText('😀', 100)).toBe('😀')
    // Halves are paired as the document wrote them: a dropped character between two halves never joins them.
    expect(cleanValueText('\ud83d\u0001\ude00', 100)).toBe('\ufffd\ufffd')
  })

  it('counts the cap after what is dropped and trimmed: text that differs only there is one value', () => {
    const long = 'L'.repeat(1_100)
    const kept = 'L'.repeat(1_024)
    // A control character before the leading space, or more leading space than the cap, takes no room.
    expect(cleanValueText(`\u0001 ${long}`, 1_024)).toBe(kept)
    expect(cleanValueText(`\u0007\u0000 \t\u0001 ${long}`, 1_024)).toBe(kept)
    expect(cleanValueText(`${' '.repeat(5_000)}Blue`, 1_024)).toBe('Blue')
    expect(cleanValueText(`${'\u0001 '.repeat(3_000)}Blue`, 1_024)).toBe('Blue')
    // Every character trim() removes takes no room, whatever its code.
    for (let code = 0; code < 0x10000; code++) {
      const ch = String.fromCharCode(code)
      if (ch.trim() === '') expect(cleanValueText(`${ch}x`, 1), `U+${code.toString(16)}`).toBe('x')
    }
    const out = normalizeAttributes({
      attributes: [
        { trait_type: 'Note', value: long },
        { trait_type: 'Note', value: `\u0001 ${long}` },
        { trait_type: `\u0001 ${'T'.repeat(300)}`, value: 1 },
      ],
    })
    expect(out).toEqual([
      { trait_type: 'Note', value: kept },
      { trait_type: 'T'.repeat(256), value: 1 },
    ])
  })

  // Control characters *inside* a value take no room either: the whole value is walked until the cap is kept.
  it('keeps the text after a long run of control characters inside a value', () => {
    expect(cleanValueText(`Cap${'\u0001'.repeat(3_000)}!`, 1_024)).toBe('Cap!')
    const out = normalizeMetadata({ description: `Before${'\u0001'.repeat(25_000)} after.` })
    expect(out.description).toBe('Before after.')
  })

  it('values that differ only in control characters inside them are one trait value', () => {
    const out = normalizeAttributes({
      attributes: [
        { trait_type: 'Hat', value: 'Cap!' },
        { trait_type: 'Hat', value: `Cap${'\u0001'.repeat(3_000)}!` },
      ],
    })
    expect(out).toEqual([{ trait_type: 'Hat', value: 'Cap!' }])
  })

  it('trait types too: a control run inside a type does not cut it', () => {
    const out = normalizeAttributes({
      attributes: [{ trait_type: `Back${'\u0007'.repeat(1_000)}ground`, value: 'Blue' }],
    })
    expect(out).toEqual([{ trait_type: 'Background', value: 'Blue' }])
  })

  it('never invents a U+FFFD by stopping inside a surrogate pair after a control run', () => {
    const out = cleanValueText(`A${'\u0001'.repeat(1_000)}${'😀'.repeat(600)}`, 1_024)
    expect(out).not.toContain('\ufffd')
    expect(out).toBe(`A${'😀'.repeat(600)}`)
  })

  it('reads keys named __proto__ and constructor as data, never as prototypes', () => {
    const doc = parse(
      '{"__proto__": {"description": "polluted", "attributes": [{"trait_type": "P", "value": "p"}]},' +
        ' "constructor": {"prototype": {"description": "polluted"}},' +
        ' "attributes": [{"trait_type": "__proto__", "value": "a"}, {"trait_type": "constructor", "value": "b"},' +
        ' {"__proto__": {"trait_type": "x", "value": "y"}}],' +
        ' "properties": {"__proto__": "c"}}',
    )
    expect(Object.keys(doc)).toEqual(['__proto__', 'constructor', 'attributes', 'properties'])
    expect(Object.getPrototypeOf(doc)).toBe(Object.prototype)
    const out = normalizeMetadata(doc)
    expect(out.description).toBeNull()
    expect(out.attributes).toEqual([
      { trait_type: '__proto__', value: 'a' },
      { trait_type: 'constructor', value: 'b' },
    ])
    expect(({} as Record<string, unknown>).description).toBeUndefined()
    expect(normalizeAttributes(parse('{"properties": {"__proto__": "c", "constructor": 1}}'))).toEqual([
      { trait_type: '__proto__', value: 'c' },
      { trait_type: 'constructor', value: 1 },
    ])
  })

  it('survives any nesting: the stored document stops at 64 levels', () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`
    const doc = parse(`{"attributes": [${'['.repeat(100_000)}${']'.repeat(100_000)}], "x": ${deep}}`)
    expect(normalizeMetadata(doc).attributes).toBeNull()
    let depth = 0
    for (let node: unknown = doc.x; node && typeof node === 'object'; node = (node as { a: unknown }).a)
      depth++
    expect(depth).toBe(64)
    expect(() => JSON.stringify(doc)).not.toThrow()
  })

  it('makes strings jsonb can hold: no NUL, no unpaired surrogate, in keys too', () => {
    const doc = parse('{"na\\u0000me": "a\\u0000b", "\\ud800": "\\udfff", "ok": "\\ud83d\\ude00"}')
    expect(doc).toEqual({ name: 'ab', '\ufffd': '\ufffd', ok: '😀' })
  })

  it('takes animation_url, external_url and background_color, made valid', () => {
    expect(
      normalizeMetadata({
        description: '  A token.  ',
        animation_url: ' ipfs://bafy/anim.mp4 ',
        external_url: 'https://example.com/a b',
        background_color: '#FFAA00',
      }),
    ).toEqual({
      description: 'A token.',
      attributes: null,
      animationUrl: 'ipfs://bafy/anim.mp4',
      externalUrl: 'https://example.com/a%20b',
      backgroundColor: 'ffaa00',
    })
    expect(normalizeMetadata({ background_color: 'fa0' }).backgroundColor).toBe('ffaa00')
    expect(normalizeMetadata({ background_color: 'red' }).backgroundColor).toBeNull()
    expect(normalizeMetadata({ background_color: 0xffffff }).backgroundColor).toBeNull()
    expect(normalizeMetadata({ animation_url: 42, external_url: ['x'] })).toEqual({
      description: null,
      attributes: null,
      animationUrl: null,
      externalUrl: null,
      backgroundColor: null,
    })
  })

  it('leaves out locations longer than their caps', () => {
    const long = `data:text/html;base64,${'A'.repeat(10_000)}`
    expect(normalizeMetadata({ animation_url: long }).animationUrl).toBeNull()
    expect(
      normalizeMetadata({ external_url: `https://x.example/${'a'.repeat(3_000)}` }).externalUrl,
    ).toBeNull()
    const fits = `data:text/html;base64,${'A'.repeat(8_000)}`
    expect(normalizeMetadata({ animation_url: fits }).animationUrl).toBe(fits)
  })

  it('ignores values of the wrong type', () => {
    expect(normalizeMetadata({ description: { text: 'x' } }).description).toBeNull()
    expect(normalizeMetadata({ description: 12 }).description).toBeNull()
    expect(normalizeMetadata({ description: '' }).description).toBeNull()
  })

  it('never throws, whatever the document', () => {
    const values: unknown[] = [null, true, 0, -1.5, '', 'x', [], {}, [null], { value: {} }, [[{}]]]
    for (const a of values)
      for (const b of values) {
        const doc = {
          attributes: a,
          traits: b,
          properties: a,
          description: b,
          animation_url: a,
          background_color: b,
        }
        expect(() => normalizeMetadata(doc as Record<string, unknown>)).not.toThrow()
        expect(() => JSON.stringify(normalizeMetadata(doc as Record<string, unknown>))).not.toThrow()
      }
  })
})
