/**
 * The typed client of the NFT Data API: requests through openapi-fetch,
 * typed by src/client/schema.ts (generated from /openapi.json), retried on
 * 429 and 503 (retry.ts), failures thrown as NftDataApiError (errors.ts).
 * Lists are async iterators that follow `next_page_params`; new activity is
 * followed by polling its first page (follow.ts). See docs/client.md.
 */
import createFetchClient, { type Client } from 'openapi-fetch'
import { NftDataApiError } from './errors.js'
import { type ActivityItem, type FollowOptions, followActivity, type OpenStream } from './follow.js'
import { type RetryOptions, retryingFetch } from './retry.js'
import type { components, paths } from './schema.js'

type JsonOf<Operation> = Operation extends {
  responses: { 200: { content: { 'application/json': infer Body } } }
}
  ? Body
  : never

/** The JSON body of a path's GET. */
export type ResponseOf<P extends keyof paths> = JsonOf<paths[P]['get']>

/** Paths whose GET answers JSON. */
export type ReadPath = { [P in keyof paths]: [ResponseOf<P>] extends [never] ? never : P }[keyof paths]

/** Paths whose GET answers a page envelope: every list endpoint. */
export type ListPath = {
  [P in ReadPath]: ResponseOf<P> extends { pagination: unknown } ? P : never
}[ReadPath]

/** An item of a list endpoint. */
export type ItemOf<P extends ListPath> = ResponseOf<P> extends { data: Array<infer Item> } ? Item : never

type ParametersOf<P extends keyof paths> = paths[P]['get'] extends { parameters: infer X } ? X : never

/** The path and query parameters of a GET, and a signal to abort it (retries and their waits included). */
export type RequestOptions<P extends keyof paths> = Omit<ParametersOf<P>, 'header' | 'cookie'> & {
  signal?: AbortSignal
}

/** The options argument, optional where the path takes no required parameter. */
type OptionsArg<P extends keyof paths> =
  // biome-ignore lint/complexity/noBannedTypes: `{}` is "no required key" here.
  {} extends RequestOptions<P> ? [options?: RequestOptions<P>] : [options: RequestOptions<P>]

export type Collection = components['schemas']['Collection']
export type Nft = components['schemas']['Nft']
export type Transfer = components['schemas']['Transfer']
export type IndexerStatus = components['schemas']['IndexerStatus']
export type DemoToken = components['schemas']['DemoToken']
export type CollectionOwner = components['schemas']['CollectionOwner']
export type OwnerCollection = components['schemas']['OwnerCollection']
export type { ActivityItem }

export interface NftDataClientOptions {
  /** The service's address, e.g. https://nft.example.org (the part before /v1). */
  baseUrl: string
  /** A portal API key or a demo token; sent as `Authorization: Bearer …`. Server-side only. */
  apiKey?: string
  /** Retries, and one attempt's time limit (`timeoutMs`, default 30 s). */
  retry?: RetryOptions
  /** The fetch to send requests with (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>
}

export interface NftDataClient {
  /** The openapi-fetch client itself (with the same credential and retries), for HEAD and anything else. */
  readonly api: Client<paths>
  /** GET a path; the 200 body, or throws NftDataApiError. */
  get<P extends ReadPath>(path: P, ...options: OptionsArg<P>): Promise<ResponseOf<P>>
  /** Every page of a list, following `next_page_params` until `has_more` is false. */
  pages<P extends ListPath>(
    path: P,
    ...options: OptionsArg<P>
  ): AsyncGenerator<ResponseOf<P>, void, undefined>
  /** Every item of a list, page after page. */
  items<P extends ListPath>(path: P, ...options: OptionsArg<P>): AsyncGenerator<ItemOf<P>, void, undefined>
  /** New activity as it is indexed, each event once (see follow.ts). */
  followActivity(options?: FollowOptions): AsyncGenerator<ActivityItem, void, undefined>
  /** POST /v1/demo-token: a 15-minute demo token (takes no credential). */
  issueDemoToken(options?: { signal?: AbortSignal }): Promise<DemoToken>
}

export function createNftDataClient(options: NftDataClientOptions): NftDataClient {
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
    fetch: retryingFetch(options.retry, options.fetch),
  })
  // openapi-fetch types each call by its literal path; this client's generic paths go through one untyped door.
  // Bodies come as text and are parsed here, where a body that is not the API's JSON can be told apart.
  const untypedGet = api.GET as unknown as (
    path: string,
    init: { params: object; signal?: AbortSignal; parseAs: 'text' },
  ) => Promise<{ data?: string; error?: unknown; response: Response }>

  async function get<P extends ReadPath>(path: P, ...[options]: OptionsArg<P>): Promise<ResponseOf<P>> {
    const { signal, ...params } = (options ?? {}) as RequestOptions<P>
    const { data, error, response } = await untypedGet(path, { params, signal, parseAs: 'text' })
    if (!response.ok) throw await NftDataApiError.from(response, error)
    return successBody(response, data) as ResponseOf<P>
  }

  async function* pages<P extends ListPath>(path: P, ...[options]: OptionsArg<P>) {
    const first = (options ?? {}) as RequestOptions<P> & { query?: Record<string, unknown> }
    let query = { ...first.query }
    let cursor = ''
    for (;;) {
      const page = (await get(path, ...([{ ...first, query }] as OptionsArg<P>))) as ResponseOf<P> & {
        pagination?: { has_more?: boolean; next_page_params?: Record<string, unknown> }
      }
      const next = page.pagination?.next_page_params
      // A list that says it goes on must say where, and somewhere new: else the walk would end
      // short without notice, or never end.
      if (page.pagination?.has_more && (!next || JSON.stringify(next) === cursor))
        throw NftDataApiError.badResponse(
          200,
          new Headers(),
          `${path}: has_more is true but next_page_params is ${next ? 'the cursor just followed' : 'missing'}`,
        )
      yield page
      if (!page.pagination?.has_more || !next) return
      cursor = JSON.stringify(next)
      // Copied as they are, over the unchanged filters (the specification's pagination rules).
      query = { ...query, ...next }
    }
  }

  /** GET /v1/activity/stream, unretried and unread: the follower reads (and resumes) the stream itself. */
  const streamFetch = options.fetch ?? ((request: Request) => fetch(request))
  const base = options.baseUrl.replace(/\/+$/, '')
  const openStream: OpenStream = (query, lastEventId, signal) => {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) search.set(name, String(value))
    const headers: Record<string, string> = { Accept: 'text/event-stream' }
    if (options.apiKey) headers.Authorization = `Bearer ${options.apiKey}`
    if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId
    const qs = search.toString()
    return streamFetch(new Request(`${base}/v1/activity/stream${qs ? `?${qs}` : ''}`, { headers, signal }))
  }

  async function* items<P extends ListPath>(path: P, ...options: OptionsArg<P>) {
    for await (const page of pages(path, ...options)) {
      yield* (page as unknown as { data: ItemOf<P>[] }).data
    }
  }

  return {
    api,
    get,
    pages,
    items,
    followActivity: (follow = {}) =>
      followActivity((query, signal) => get('/v1/activity', { query, signal }), follow, openStream),
    async issueDemoToken({ signal } = {}) {
      const { data, error, response } = await api.POST('/v1/demo-token', { signal, parseAs: 'text' })
      if (!response.ok) throw await NftDataApiError.from(response, error)
      return (successBody(response, data) as { data: DemoToken }).data
    },
  }
}

/** A success's body: the API's JSON object with its `data`, or NftDataApiError (BAD_RESPONSE). */
function successBody(response: Response, text: string | undefined): { data: unknown } {
  let body: unknown
  try {
    body = JSON.parse(text ?? '')
  } catch {
    const start = (text ?? '').slice(0, 80).replace(/\s+/g, ' ')
    throw NftDataApiError.badResponse(
      response.status,
      response.headers,
      `the body is not JSON${start ? ` (it begins "${start}")` : ' (it is empty)'}; is baseUrl the service's address?`,
    )
  }
  if (typeof body !== 'object' || body === null || !('data' in body))
    throw NftDataApiError.badResponse(response.status, response.headers, 'the JSON body has no data')
  return body as { data: unknown }
}
