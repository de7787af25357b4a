/**
 * Contract checks for /v1 responses, from two independent sources:
 *  - /openapi.json, validated by @hyperjump/json-schema (an OpenAPI 3.1
 *    validator that shares nothing with the zod schemas the document was
 *    generated from): the document itself against the OAS 3.1 meta-schema,
 *    every response body against the schema of its operation and status;
 *  - the specification's field tables, written out here by hand: JSON type,
 *    presence, and no field beyond the table except documented extensions.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { validate } from '@hyperjump/json-schema/openapi-3-1'
import { expect } from 'vitest'
import type { Page } from '@/lib/schemas'

type FieldType =
  | 'string'
  | 'string|null'
  | 'boolean'
  | 'integer'
  | 'integer|null'
  | 'decimal'
  | 'decimal|null'
  | 'date-time'
  | 'address'
type Table = Record<string, [FieldType, boolean]>

const ADDRESS = /^0x[0-9a-f]{40}$/
const DECIMAL = /^[0-9]+$/
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** Collection (spec table; symbol always present, null when unknown: docs/design.md, "Resources"). */
export const COLLECTION_TABLE: Table = {
  contract_address: ['address', true],
  network: ['string', true],
  name: ['string', true],
  symbol: ['string|null', true],
  description: ['string|null', false],
  image_url: ['string|null', false],
  contract_type: ['string', true],
  total_supply: ['decimal', true],
  unique_holders: ['decimal', true],
  total_transfers: ['decimal', true],
  creator_address: ['address', false],
  deploy_tx_hash: ['string|null', false],
  created_at: ['date-time', true],
}

/** NFT (spec table; the table marks which fields are optional). */
export const NFT_TABLE: Table = {
  collection_address: ['address', true],
  token_id: ['decimal', true],
  network: ['string', true],
  current_owner: ['address', true],
  is_burned: ['boolean', true],
  transfer_count: ['integer', true],
  metadata_uri: ['string', false],
  image_url: ['string', false],
  media_url: ['string', false],
  collection_name: ['string', true],
  collection_symbol: ['string', true],
  name: ['string', false],
  media_type: ['string', false],
}
export const NFT_EXTENSIONS = ['metadata_status']

export const TRANSFER_TABLE: Table = {
  collection_address: ['address', true],
  token_id: ['decimal', true],
  network: ['string', true],
  from_address: ['address', true],
  to_address: ['address', true],
  event_type: ['string', true],
  block_number: ['decimal', true],
  log_index: ['integer', true],
  transaction_hash: ['string', true],
  block_timestamp: ['date-time', true],
  confirmations: ['integer|null', true],
}
export const TRANSFER_EXTENSIONS = ['batch_index']

export const ACTIVITY_TABLE: Table = { ...TRANSFER_TABLE, collection_name: ['string', true] }

export const STATUS_TABLE: Table = {
  network: ['string', true],
  coverage_status: ['string', true],
  coverage_start_block: ['decimal|null', false],
  last_confirmed_block: ['decimal', true],
  last_seen_block: ['decimal', true],
  coverage_verified_at: ['date-time', false],
  updated_at: ['date-time', true],
}
export const STATUS_EXTENSIONS = [
  'last_indexed_block',
  'lag_blocks',
  'last_verified_block',
  'verification_mismatches',
  'verification_repairs',
  'verified_by',
  'log_index_untrusted',
  'head_age_seconds',
  'rpc_status',
  'rpc_endpoints',
  'metadata_backlog',
  'metadata_hosts_backed_off',
]

function checkType(value: unknown, type: FieldType, where: string) {
  const nullable = type.endsWith('|null')
  if (value === null) {
    expect(nullable || type === 'date-time', `${where} must not be null`).toBe(true)
    return
  }
  const base = type.replace('|null', '')
  switch (base) {
    case 'string':
      expect(typeof value, where).toBe('string')
      break
    case 'boolean':
      expect(typeof value, where).toBe('boolean')
      break
    case 'integer':
      expect(Number.isSafeInteger(value), `${where} = ${JSON.stringify(value)} must be an integer`).toBe(true)
      break
    case 'decimal':
      expect(value, where).toMatch(DECIMAL)
      break
    case 'date-time':
      expect(value, where).toMatch(DATE_TIME)
      break
    case 'address':
      expect(value, where).toMatch(ADDRESS)
      break
  }
}

/** Checks one resource against a spec table: types, presence, and nothing else but `extensions`. */
export function expectSpecFields(item: unknown, table: Table, extensions: string[] = [], where = 'item') {
  expect(item !== null && typeof item === 'object', `${where} is an object`).toBe(true)
  const object = item as Record<string, unknown>
  for (const [field, [type, required]] of Object.entries(table)) {
    if (!(field in object)) {
      expect(required, `${where}.${field} is required`).toBe(false)
      continue
    }
    checkType(object[field], type, `${where}.${field}`)
  }
  const extra = Object.keys(object).filter((k) => !(k in table) && !extensions.includes(k))
  expect(extra, `${where} has fields outside the spec table`).toEqual([])
}

/** The page envelope of the specification. */
export function expectPageEnvelope(body: unknown, cursorKeys: string[]) {
  const page = body as Page<unknown, Record<string, unknown>>
  expect(Object.keys(page).sort()).toEqual(['coverage', 'data', 'pagination'])
  expect(Array.isArray(page.data)).toBe(true)
  expect(Number.isInteger(page.pagination.limit)).toBe(true)
  expect(typeof page.pagination.has_more).toBe('boolean')
  if (page.pagination.has_more) {
    expect(Object.keys(page.pagination.next_page_params ?? {}).sort()).toEqual([...cursorKeys].sort())
  } else {
    expect('next_page_params' in page.pagination, 'next_page_params is omitted when has_more is false').toBe(
      false,
    )
  }
  expect(['unknown', 'partial', 'complete']).toContain(page.coverage.status)
  if (page.coverage.start_block !== null) expect(page.coverage.start_block).toMatch(DECIMAL)
}

export class OpenApiContract {
  private constructor(
    readonly doc: OpenApiDoc,
    private readonly uri: string,
  ) {}

  static async load(doc: OpenApiDoc): Promise<OpenApiContract> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'openapi-'))
    const file = path.join(dir, `v${Date.now()}.openapi.json`)
    writeFileSync(file, JSON.stringify(doc))
    // A file named *.openapi.json is read by the validator as an OpenAPI document.
    const uri = pathToFileURL(file).href
    return new OpenApiContract(doc, uri)
  }

  /** The document is a valid OpenAPI 3.1 document. */
  async validateDocument(): Promise<{ valid: boolean }> {
    return validate('https://spec.openapis.org/oas/3.1/schema-base', this.doc as never)
  }

  /** The templated path of the document that `concrete` matches. */
  templateOf(concrete: string): string {
    const pathname = concrete.split('?')[0]!
    for (const template of Object.keys(this.doc.paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`)
      if (pattern.test(pathname)) return template
    }
    throw new Error(`no path of the document matches ${pathname}`)
  }

  /** The response is one the document declares for this operation, and its body validates. */
  async expectResponse(method: string, concretePath: string, status: number, body: unknown): Promise<void> {
    const template = this.templateOf(concretePath)
    const operation = this.doc.paths[template]?.[method.toLowerCase()]
    expect(operation, `${method} ${template} is documented`).toBeDefined()
    const declared = Object.keys(operation!.responses)
    expect(declared, `${method} ${template} declares status ${status}`).toContain(String(status))
    const content = operation!.responses[String(status)]?.content
    if (!content?.['application/json']) return
    const pointer = [
      'paths',
      template,
      method.toLowerCase(),
      'responses',
      String(status),
      'content',
      'application/json',
      'schema',
    ]
      .map((p) => encodeURIComponent(p.replaceAll('~', '~0').replaceAll('/', '~1')))
      .join('/')
    const output = await validate(`${this.uri}#/${pointer}`, body as never, 'BASIC')
    const errors = output.valid ? [] : (output.errors ?? []).slice(0, 5)
    expect(output.valid, `${method} ${concretePath} ${status}: ${JSON.stringify(errors)}`).toBe(true)
  }

  /** Every `example` of a component schema validates against that schema. */
  async expectExamplesValid(): Promise<number> {
    let checked = 0
    for (const [name, schema] of Object.entries(this.doc.components?.schemas ?? {})) {
      const example = (schema as { example?: unknown }).example
      if (example === undefined) continue
      const output = await validate(
        `${this.uri}#/components/schemas/${encodeURIComponent(name)}`,
        example as never,
      )
      expect(output.valid, `example of ${name}`).toBe(true)
      checked++
    }
    return checked
  }
}

export interface OpenApiDoc {
  openapi: string
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>
  components?: { schemas?: Record<string, unknown> }
}
