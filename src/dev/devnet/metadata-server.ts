/**
 * The devnet's metadata helper: serves the token and collection JSON of the HTTP-metadata
 * collections (DevnetPostcards, ERC-721; DevnetEditions, ERC-1155) and their images as SVG
 * and PNG, on 127.0.0.1 only.
 *
 *   GET /metadata/<id>.json[?v=<revision>]   token metadata (revision changes the artwork)
 *   GET /metadata/collection.json            collection metadata (contractURI)
 *   GET /images/<id>.svg|png[?v=<revision>]  token artwork
 *   GET /images/collection.svg|png           collection artwork
 *   GET /animations/<id>.svg[?v=<revision>]   animated artwork (animation_url of ANIMATED_TOKEN_ID)
 *   GET /editions/<hex>.json[?v=<revision>]  ERC-1155 edition metadata; <hex> is the id as 64
 *                                            lowercase hex digits, what an EIP-1155 client puts
 *                                            for `{id}` in uri(id) (docs/metadata.md, "ERC-1155")
 *   GET /editions/collection.json            the editions' collection metadata
 *   GET /editions/images/<id>.svg|png[?v=<revision>]  edition artwork (decimal id)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { postcardAnimationSvg, postcardPng, postcardSvg, postcardTraits } from './images'

/** What an EIP-1155 client requests for `{id}`: 64 lowercase hex digits, no 0x. */
const EDITION_METADATA_PATH = /^\/editions\/([0-9a-f]{64})\.json$/
const EDITION_IMAGE_PATH = /^\/editions\/images\/(\d{1,78})\.(svg|png)$/
const EDITION_RARITIES = ['Common', 'Common', 'Uncommon', 'Rare']

export type MetadataServerOptions = {
  /** Preferred port (e.g. the one used last run, so token URIs stay valid); 0 or busy: a free one. */
  port?: number
  host?: string
}

export type MetadataServer = {
  /** e.g. http://127.0.0.1:43121 */
  origin: string
  port: number
  stop(): Promise<void>
}

export const COLLECTION_DESCRIPTION =
  'Postcards from the local devnet. Metadata and images are served over HTTP by the devnet helper.'

const TOKEN_ID = '(\\d{1,78})'
const METADATA_PATH = new RegExp(`^/metadata/${TOKEN_ID}\\.json$`)
const IMAGE_PATH = new RegExp(`^/images/${TOKEN_ID}\\.(svg|png)$`)
const ANIMATION_PATH = new RegExp(`^/animations/${TOKEN_ID}\\.svg$`)

/** The demo token whose metadata carries an animation_url (docs/metadata.md, "The whole document"). */
export const ANIMATED_TOKEN_ID = 1n

export async function startMetadataServer(options: MetadataServerOptions = {}): Promise<MetadataServer> {
  const host = options.host ?? '127.0.0.1'
  let origin = ''
  const server = createServer((request, response) => {
    try {
      handle(request, response, origin)
    } catch {
      send(
        response,
        request,
        500,
        'application/json; charset=utf-8',
        JSON.stringify({ error: 'internal error' }),
      )
    }
  })
  // Keep-alive sockets would otherwise hold stop() open.
  server.keepAliveTimeout = 2_000

  const port = await listen(server, host, options.port ?? 0).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' && options.port) return listen(server, host, 0)
    throw error
  })
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return { origin, port, stop }
}

/** The metadata document of a token, as served; exported so tests can compare. */
export function tokenMetadata(origin: string, tokenId: bigint, revision: number) {
  const traits = postcardTraits(tokenId, revision)
  // Alternate formats so indexers meet both vector and raster images.
  const format = tokenId % 2n === 0n ? 'svg' : 'png'
  const query = revision > 0 ? `?v=${revision}` : ''
  const animated = tokenId === ANIMATED_TOKEN_ID
  return {
    name: `Postcard #${tokenId}`,
    description: `A postcard from the ${traits.place.toLowerCase()} of the local devnet.`,
    image: `${origin}/images/${tokenId}.${format}${query}`,
    ...(animated ? { animation_url: `${origin}/animations/${tokenId}.svg${query}` } : {}),
    external_url: `${origin}/metadata/${tokenId}.json${query}`,
    background_color: hexColor(traits.hue),
    attributes: [
      { trait_type: 'Place', value: traits.place },
      { trait_type: 'Stamp', value: traits.stamp },
      { trait_type: 'Revision', value: revision, display_type: 'number' },
      { trait_type: 'Animated', value: animated },
    ],
  }
}

/** A pale background in the postcard's hue, as OpenSea's background_color: six hex digits, no '#'. */
function hexColor(hue: number): string {
  const channel = (offset: number) =>
    Math.round(200 + 55 * Math.cos(((hue + offset) * Math.PI) / 180) * 0.5)
      .toString(16)
      .padStart(2, '0')
  return `${channel(0)}${channel(120)}${channel(240)}`
}

export function collectionMetadata(origin: string) {
  return {
    name: 'Devnet Postcards',
    description: COLLECTION_DESCRIPTION,
    image: `${origin}/images/collection.png`,
    external_link: `${origin}/metadata/collection.json`,
  }
}

/** The metadata document of an ERC-1155 edition, as served; exported so tests can compare. */
export function editionMetadata(origin: string, tokenId: bigint, revision: number) {
  const traits = postcardTraits(tokenId, revision)
  const format = tokenId % 2n === 0n ? 'svg' : 'png'
  const query = revision > 0 ? `?v=${revision}` : ''
  return {
    name: `Devnet Edition #${tokenId}`,
    description: `An edition of the ${traits.place.toLowerCase()}, held in quantities on the local devnet.`,
    image: `${origin}/editions/images/${tokenId}.${format}${query}`,
    attributes: [
      { trait_type: 'Place', value: traits.place },
      { trait_type: 'Stamp', value: traits.stamp },
      { trait_type: 'Rarity', value: EDITION_RARITIES[Number(tokenId % BigInt(EDITION_RARITIES.length))]! },
      { trait_type: 'Revision', value: revision, display_type: 'number' },
    ],
  }
}

export function editionsCollectionMetadata(origin: string) {
  return {
    name: 'Devnet Editions',
    description:
      'ERC-1155 editions of the local devnet, held in quantities; metadata served by the devnet helper.',
    image: `${origin}/editions/images/collection.png`,
    external_link: `${origin}/editions/collection.json`,
  }
}

function handle(request: IncomingMessage, response: ServerResponse, origin: string) {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('Allow', 'GET, HEAD')
    return sendJson(response, request, 405, { error: 'method not allowed' })
  }
  const url = new URL(request.url ?? '/', 'http://localhost')
  const revision = Math.min(Number.parseInt(url.searchParams.get('v') ?? '0', 10) || 0, 1_000_000)

  if (url.pathname === '/metadata/collection.json')
    return sendJson(response, request, 200, collectionMetadata(origin))
  if (url.pathname === '/images/collection.svg' || url.pathname === '/images/collection.png') {
    return sendImage(
      response,
      request,
      url.pathname.endsWith('.png') ? 'png' : 'svg',
      'Devnet',
      postcardTraits(0n, 7),
    )
  }
  if (url.pathname === '/editions/collection.json')
    return sendJson(response, request, 200, editionsCollectionMetadata(origin))
  if (
    url.pathname === '/editions/images/collection.png' ||
    url.pathname === '/editions/images/collection.svg'
  ) {
    const format = url.pathname.endsWith('.png') ? 'png' : 'svg'
    return sendImage(response, request, format, 'Editions', postcardTraits(3n, 5))
  }
  const editionMatch = EDITION_METADATA_PATH.exec(url.pathname)
  if (editionMatch) {
    const tokenId = BigInt(`0x${editionMatch[1]!}`)
    return sendJson(response, request, 200, editionMetadata(origin, tokenId, revision))
  }
  const editionImageMatch = EDITION_IMAGE_PATH.exec(url.pathname)
  if (editionImageMatch) {
    const tokenId = BigInt(editionImageMatch[1]!)
    return sendImage(
      response,
      request,
      editionImageMatch[2] as 'svg' | 'png',
      `Edition ${tokenId}`,
      postcardTraits(tokenId, revision),
    )
  }
  const metadataMatch = METADATA_PATH.exec(url.pathname)
  if (metadataMatch)
    return sendJson(response, request, 200, tokenMetadata(origin, BigInt(metadataMatch[1]!), revision))
  const animationMatch = ANIMATION_PATH.exec(url.pathname)
  if (animationMatch) {
    const tokenId = BigInt(animationMatch[1]!)
    return send(
      response,
      request,
      200,
      'image/svg+xml',
      postcardAnimationSvg(`#${tokenId}`, postcardTraits(tokenId, revision)),
    )
  }
  const imageMatch = IMAGE_PATH.exec(url.pathname)
  if (imageMatch) {
    const tokenId = BigInt(imageMatch[1]!)
    return sendImage(
      response,
      request,
      imageMatch[2] as 'svg' | 'png',
      `#${tokenId}`,
      postcardTraits(tokenId, revision),
    )
  }
  if (url.pathname === '/health') return sendJson(response, request, 200, { ok: true })
  return sendJson(response, request, 404, { error: 'not found' })
}

function sendImage(
  response: ServerResponse,
  request: IncomingMessage,
  format: 'svg' | 'png',
  label: string,
  traits: ReturnType<typeof postcardTraits>,
) {
  if (format === 'png') return send(response, request, 200, 'image/png', postcardPng(traits))
  return send(response, request, 200, 'image/svg+xml', postcardSvg(label, traits))
}

function sendJson(response: ServerResponse, request: IncomingMessage, status: number, body: unknown) {
  send(response, request, status, 'application/json; charset=utf-8', JSON.stringify(body))
}

function send(
  response: ServerResponse,
  request: IncomingMessage,
  status: number,
  contentType: string,
  body: string | Buffer,
) {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  response.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': bytes.length,
    'Cache-Control': status === 200 ? 'public, max-age=60' : 'no-store',
  })
  response.end(request.method === 'HEAD' ? undefined : bytes)
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error)
    server.once('error', onError)
    server.listen(port, host, () => {
      server.removeListener('error', onError)
      resolve((server.address() as AddressInfo).port)
    })
  })
}
