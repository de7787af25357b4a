import { describe, expect, it } from 'vitest'
import { FetchFailure } from './outcome'
import { resolveUri, toValidUri } from './resolve-uri'

const gateways = { ipfs: 'https://gw.example/ipfs/', arweave: 'https://ar.example/' }
const resolve = (uri: string, max?: number) => resolveUri(uri, gateways, max)
const outcomeOf = (uri: string, max?: number) => {
  try {
    resolve(uri, max)
    return 'resolved'
  } catch (err) {
    return err instanceof FetchFailure ? err.outcome : 'threw'
  }
}
const text = (uri: string) => {
  const r = resolve(uri)
  if (r.kind !== 'inline') throw new Error('expected inline')
  return [r.declaredType, r.bytes.toString('utf8')]
}

describe('resolveUri', () => {
  it('maps ipfs:// (also ipfs://ipfs/ and bare CIDs) through IPFS_GATEWAY', () => {
    const cid = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG'
    expect(resolve(`ipfs://${cid}/1.json`)).toEqual({
      kind: 'fetch',
      url: `https://gw.example/ipfs/${cid}/1.json`,
      urls: [`https://gw.example/ipfs/${cid}/1.json`],
      viaGateway: true,
    })
    expect(resolve(`ipfs://ipfs/${cid}`)).toMatchObject({ url: `https://gw.example/ipfs/${cid}` })
    expect(resolve(cid)).toMatchObject({ url: `https://gw.example/ipfs/${cid}` })
    const v1 = 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi'
    expect(resolve(`  ipfs://${v1}  `)).toMatchObject({ url: `https://gw.example/ipfs/${v1}` })
  })

  it('maps ar:// through ARWEAVE_GATEWAY', () => {
    const tx = 'bNbA3TEQVL60xlgCcqdz4ZPHFZ711cZ3hmkpGttDt_U'
    expect(resolve(`ar://${tx}`)).toEqual({
      kind: 'fetch',
      url: `https://ar.example/${tx}`,
      urls: [`https://ar.example/${tx}`],
      viaGateway: true,
    })
    expect(outcomeOf('ar://short')).toBe('invalid_uri')
  })

  it('gives every configured gateway, in order', () => {
    const cid = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG'
    const several = {
      ipfs: 'https://a.example/ipfs/, https://b.example/ipfs',
      arweave: 'https://ar.example/',
    }
    expect(resolveUri(`ipfs://${cid}/1.json`, several)).toEqual({
      kind: 'fetch',
      url: `https://a.example/ipfs/${cid}/1.json`,
      urls: [`https://a.example/ipfs/${cid}/1.json`, `https://b.example/ipfs/${cid}/1.json`],
      viaGateway: true,
    })
  })

  it('makes valid URIs that point at the same bytes', () => {
    const raw = 'data:image/svg+xml;utf8,<svg xmlns="http://www.w3.org/2000/svg"><text>a b é</text></svg>'
    const valid = toValidUri(raw)
    expect(valid).not.toMatch(/[\s"<>]/)
    expect(() => new URL(valid)).not.toThrow()
    expect(valid).toMatch(/^data:image\/svg\+xml;utf8,%3Csvg%20xmlns=%22http/)
    const bytes = (uri: string) => {
      const r = resolve(uri)
      if (r.kind !== 'inline') throw new Error('expected inline')
      return r.bytes.toString('utf8')
    }
    expect(bytes(valid)).toBe(bytes(raw))
    // A stray '%' makes the data literal: it stays literal.
    const stray = 'data:application/json,{"name":"100% real %41"}'
    expect(bytes(toValidUri(stray))).toBe(bytes(stray))
    // Escapes that decode are kept; base64 loses only its whitespace.
    expect(toValidUri('data:text/plain,a%20b')).toBe('data:text/plain,a%20b')
    expect(toValidUri('data:text/plain; base64, aGVs bG8=')).toBe('data:text/plain;base64,aGVsbG8=')
    expect(bytes(toValidUri('data:text/plain; base64, aGVs bG8='))).toBe('hello')
    // URIs that are valid already, IPFS forms included, are kept as written.
    for (const uri of [
      'https://meta.example/img/1.png?x=1&y=2',
      'ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG/1.png',
      'ipfs://ipfs/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG',
      'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG',
      'data:image/png;base64,iVBORw0KGgo=',
    ])
      expect(toValidUri(uri)).toBe(uri)
    expect(toValidUri('https://meta.example/a b.png')).toBe('https://meta.example/a%20b.png')
  })

  it('gives only URI characters and whole escapes for any input, never throwing', () => {
    const pool = [
      'a',
      ' ',
      '%',
      '%4',
      '%41',
      '"',
      '<',
      '>',
      '\\',
      '^',
      '`',
      '{',
      '|',
      '}',
      'é',
      '😀',
      '\uD800',
      '\n',
      '\u0000',
      ',',
      ';',
    ]
    let seed = 7
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    for (let i = 0; i < 500; i++) {
      const body = Array.from({ length: rand(12) }, () => pool[rand(pool.length)]).join('')
      for (const prefix of [
        'data:text/plain,',
        'data:image/svg+xml;base64,',
        'https://h.example/',
        'ipfs://Qm/',
      ]) {
        const out = toValidUri(prefix + body)
        expect(out).toMatch(/^([A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/)
      }
      // Percent-encoded data (not base64) keeps its bytes.
      const raw = `data:text/plain,${body}`
      const bytesOf = (uri: string) => {
        const r = resolve(uri)
        return r.kind === 'inline' ? r.bytes.toString('hex') : ''
      }
      if (!/[\uD800-\uDFFF]/.test(body)) expect(bytesOf(toValidUri(raw))).toBe(bytesOf(raw))
    }
  })

  it('keeps http(s) URLs as they are', () => {
    expect(resolve('https://meta.example/1')).toEqual({
      kind: 'fetch',
      url: 'https://meta.example/1',
      urls: ['https://meta.example/1'],
      viaGateway: false,
    })
    expect(resolve('HTTP://Meta.Example/A')).toMatchObject({ url: 'http://meta.example/A' })
  })

  it('decodes data: URIs, base64 and plain, JSON and SVG', () => {
    const json = '{"name":"x"}'
    expect(text(`data:application/json;base64,${Buffer.from(json).toString('base64')}`)).toEqual([
      'application/json',
      json,
    ])
    expect(text(`data:application/json;utf8,${json}`)).toEqual(['application/json', json])
    expect(text(`data:application/json,${encodeURIComponent(json)}`)).toEqual(['application/json', json])
    expect(text('data:application/json,{"pct":"100%"}')).toEqual(['application/json', '{"pct":"100%"}'])
    expect(text('data:image/svg+xml;charset=utf-8,<svg/>')).toEqual(['image/svg+xml', '<svg/>'])
    expect(text('data:,hello')).toEqual(['text/plain', 'hello'])
  })

  it('names the failures', () => {
    expect(outcomeOf('')).toBe('invalid_uri')
    expect(outcomeOf('file:///etc/passwd')).toBe('invalid_uri')
    expect(outcomeOf('javascript:alert(1)')).toBe('invalid_uri')
    expect(outcomeOf('ipfs://')).toBe('invalid_uri')
    expect(outcomeOf('data:application/json;base64')).toBe('invalid_uri')
    expect(outcomeOf('data:application/json;base64,@@@')).toBe('invalid_uri')
    expect(outcomeOf(`data:application/json;base64,${'A'.repeat(2000)}`, 1000)).toBe('too_large')
    expect(outcomeOf('https://[bad')).toBe('invalid_uri')
  })
})
