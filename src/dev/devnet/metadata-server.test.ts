import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { ANIMATED_TOKEN_ID, editionMetadata, startMetadataServer, tokenMetadata } from './metadata-server'

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

describe('metadata server', () => {
  it('serves token metadata whose images resolve, as SVG and PNG', async () => {
    const server = await startMetadataServer()
    try {
      expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      for (const tokenId of [4, 7]) {
        const response = await fetch(`${server.origin}/metadata/${tokenId}.json`)
        expect(response.status).toBe(200)
        expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
        const metadata = (await response.json()) as { name: string; image: string }
        expect(metadata).toEqual(tokenMetadata(server.origin, BigInt(tokenId), 0))
        expect(metadata.name).toBe(`Postcard #${tokenId}`)

        const image = await fetch(metadata.image)
        expect(image.status).toBe(200)
        const bytes = Buffer.from(await image.arrayBuffer())
        if (metadata.image.endsWith('.png')) {
          expect(image.headers.get('content-type')).toBe('image/png')
          expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE)
        } else {
          expect(image.headers.get('content-type')).toBe('image/svg+xml')
          expect(bytes.toString()).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/)
        }
      }
      // Both formats exist for every token, whichever the metadata names.
      expect((await fetch(`${server.origin}/images/4.png`)).headers.get('content-type')).toBe('image/png')
      expect((await fetch(`${server.origin}/images/7.svg`)).headers.get('content-type')).toBe('image/svg+xml')
    } finally {
      await server.stop()
    }
  })

  it('changes the metadata with the revision and serves collection metadata', async () => {
    const server = await startMetadataServer()
    try {
      const plain = await (await fetch(`${server.origin}/metadata/5.json`)).json()
      const revised = (await (await fetch(`${server.origin}/metadata/5.json?v=2`)).json()) as {
        image: string
      }
      expect(revised).not.toEqual(plain)
      expect(revised.image).toContain('?v=2')
      const collection = (await (await fetch(`${server.origin}/metadata/collection.json`)).json()) as {
        name: string
        image: string
      }
      expect(collection.name).toBe('Devnet Postcards')
      expect((await fetch(collection.image)).headers.get('content-type')).toBe('image/png')
      const missing = await fetch(`${server.origin}/metadata/abc.json`)
      expect(missing.status).toBe(404)
      expect((await missing.json()) as unknown).toEqual({ error: 'not found' })
    } finally {
      await server.stop()
    }
  })

  it('gives every postcard attributes and a background colour, and one of them an animation', async () => {
    const server = await startMetadataServer()
    try {
      const animated = (await (
        await fetch(`${server.origin}/metadata/${ANIMATED_TOKEN_ID}.json`)
      ).json()) as {
        animation_url: string
        background_color: string
        attributes: Array<{ trait_type: string; value: unknown }>
      }
      expect(animated.animation_url).toBe(`${server.origin}/animations/${ANIMATED_TOKEN_ID}.svg`)
      expect(animated.background_color).toMatch(/^[0-9a-f]{6}$/)
      expect(animated.attributes).toContainEqual({ trait_type: 'Animated', value: true })
      const animation = await fetch(animated.animation_url)
      expect(animation.headers.get('content-type')).toBe('image/svg+xml')
      expect(await animation.text()).toContain('<animate ')
      const still = tokenMetadata(server.origin, 2n, 0)
      expect(still).not.toHaveProperty('animation_url')
      expect(still.attributes.map((a) => a.trait_type)).toEqual(['Place', 'Stamp', 'Revision', 'Animated'])
    } finally {
      await server.stop()
    }
  })

  it('serves ERC-1155 edition metadata at the id as 64 hex digits, with name, image and attributes', async () => {
    const server = await startMetadataServer()
    try {
      for (const tokenId of [10n, 11n]) {
        const hex = tokenId.toString(16).padStart(64, '0')
        const response = await fetch(`${server.origin}/editions/${hex}.json`)
        expect(response.status).toBe(200)
        const metadata = (await response.json()) as {
          name: string
          image: string
          attributes: Array<{ trait_type: string; value: unknown }>
        }
        expect(metadata).toEqual(editionMetadata(server.origin, tokenId, 0))
        expect(metadata.name).toBe(`Devnet Edition #${tokenId}`)
        expect(metadata.attributes.map((a) => a.trait_type)).toEqual(['Place', 'Stamp', 'Rarity', 'Revision'])
        const image = await fetch(metadata.image)
        expect(image.status).toBe(200)
        expect(image.headers.get('content-type')).toBe(
          metadata.image.endsWith('.png') ? 'image/png' : 'image/svg+xml',
        )
      }
      const revised = (await (
        await fetch(`${server.origin}/editions/${'0'.repeat(63)}4.json?v=3`)
      ).json()) as { image: string; attributes: unknown[] }
      expect(revised.image).toContain('?v=3')
      expect(revised.attributes).toContainEqual({ trait_type: 'Revision', value: 3, display_type: 'number' })
      const collection = (await (await fetch(`${server.origin}/editions/collection.json`)).json()) as {
        name: string
        image: string
      }
      expect(collection.name).toBe('Devnet Editions')
      expect((await fetch(collection.image)).headers.get('content-type')).toBe('image/png')
      // Only the substituted form: the template itself, a decimal id or 0x are not documents.
      for (const wrong of ['%7Bid%7D', '10', `0x${'0'.repeat(62)}0a`, `${'0'.repeat(63)}A`]) {
        expect((await fetch(`${server.origin}/editions/${wrong}.json`)).status).toBe(404)
      }
    } finally {
      await server.stop()
    }
  })

  it('uses the preferred port, or a free one when it is taken', async () => {
    const first = await startMetadataServer()
    const preferred = first.port
    await first.stop()
    const again = await startMetadataServer({ port: preferred })
    expect(again.port).toBe(preferred)

    const fallback = await startMetadataServer({ port: preferred })
    try {
      expect(fallback.port).not.toBe(preferred)
      expect((await fetch(`${fallback.origin}/health`)).status).toBe(200)
    } finally {
      await fallback.stop()
      await again.stop()
    }
    // stop() really frees the port.
    const probe = createServer()
    await new Promise<void>((resolve, reject) =>
      probe.once('error', reject).listen(preferred, '127.0.0.1', resolve),
    )
    await new Promise((resolve) => probe.close(resolve))
  })
})
