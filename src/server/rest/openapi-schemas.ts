/**
 * Component schemas of the OpenAPI document, completed where the zod
 * schemas cannot say it: string formats of fields defined per resource,
 * the indexed network as an enum, realistic examples for the schemas that
 * had none, and no component that nothing references.
 */
import type { OpenAPIObject, SchemaObject } from 'openapi3-ts/oas31'

/**
 * Formats of fields the resource schemas declare as plain strings.
 * `uri-reference`, not `uri`, for image (and animation, external) locations: they are kept as the
 * metadata declares them, made valid (src/indexer/metadata/resolve-uri.ts),
 * and a bare IPFS CID is a relative reference, not an absolute URI.
 */
const FIELD_FORMATS: Record<string, Record<string, string>> = {
  Collection: { image_url: 'uri-reference' },
  Nft: {
    image_url: 'uri-reference',
    media_url: 'uri',
    animation_url: 'uri-reference',
    external_url: 'uri-reference',
  },
  DemoToken: { expires_at: 'date-time' },
}

/** Marks a schema whose only value is this deployment's network (the typed client reads it as a string). */
export const INDEXED_NETWORK_EXTENSION = 'x-indexed-network'

/** The schema of a `network` parameter: the indexed network is its only value and its default. */
export function networkParameterSchema(schema: SchemaObject, network: string): SchemaObject {
  return { ...schema, enum: [network], default: network, [INDEXED_NETWORK_EXTENSION]: true }
}

export function completeSchemas(doc: OpenAPIObject, network: string): void {
  const schemas = doc.components?.schemas ?? {}
  for (const [name, fields] of Object.entries(FIELD_FORMATS)) {
    const properties = (schemas[name] as SchemaObject | undefined)?.properties ?? {}
    for (const [field, format] of Object.entries(fields)) {
      const property = properties[field] as SchemaObject | undefined
      if (!property) throw new Error(`OpenAPI: ${name}.${field} is not in the document`)
      property.format = format
    }
  }
  const status = schemas.IndexerStatus as SchemaObject | undefined
  if (status) status.example = indexerStatusExample(network)
  const demo = schemas.DemoToken as SchemaObject | undefined
  if (demo) demo.example = DEMO_TOKEN_EXAMPLE
  // The resources' own examples name a network: the one this deployment indexes.
  for (const schema of Object.values(schemas) as SchemaObject[]) {
    const example = schema.example as Record<string, unknown> | undefined
    // A copy: the example object may be the zod schema's own metadata, shared by every document.
    if (example && typeof example === 'object' && 'network' in example)
      schema.example = { ...example, network }
  }
}

function indexerStatusExample(network: string) {
  return {
    network,
    coverage_status: 'complete',
    coverage_start_block: '0',
    last_confirmed_block: '1048564',
    last_seen_block: '1048576',
    coverage_verified_at: '2026-01-02T03:04:05.000Z',
    updated_at: '2026-01-02T03:04:17.000Z',
    last_indexed_block: '1048576',
    lag_blocks: '0',
    last_verified_block: '1048564',
    verification_mismatches: '0',
    verification_repairs: '0',
    verified_by: [
      { from_block: '0', to_block: '1048000', method: 'sampled_proof', proof_sample_rate: 0.01 },
      { from_block: '1048001', to_block: '1048564', method: 'receipts_proof', proof_sample_rate: null },
    ],
    log_index_untrusted: false,
    head_age_seconds: 3,
    rpc_status: 'ok',
    rpc_endpoints: [{ endpoint: 1, state: 'ok', head: '1048576' }],
    metadata_backlog: { pending: 12, timeout: 0, http_error: 1 },
    metadata_hosts_backed_off: [],
  }
}

const DEMO_TOKEN_EXAMPLE = {
  token: 'demo_Vb0k3Yp9qJ2mXz7RtL4wQa8sDf6hGj1kLz0xCv5bNm3',
  expires_at: '2026-01-02T03:19:05.000Z',
  scopes: ['read:collections', 'read:nfts', 'read:owners', 'read:transfers', 'read:activity', 'read:status'],
  limits: { requests_per_second: 1, requests_per_minute: 30, concurrent: 2 },
}

/** Removes components nothing outside them references, directly or through other components. */
export function removeUnusedComponents(doc: OpenAPIObject): void {
  const components = (doc.components ?? {}) as Record<string, Record<string, unknown> | undefined>
  const used = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item)
      return
    }
    if (!node || typeof node !== 'object') return
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/')) {
        if (used.has(value)) continue
        used.add(value)
        const [, , kind, name] = value.split('/')
        visit(components[kind!]?.[decodeURIComponent(name!)])
      } else visit(value)
    }
  }
  visit({ ...doc, components: undefined })
  for (const [kind, entries] of Object.entries(components)) {
    // Security schemes are referenced by name from `security`, never by $ref.
    if (kind === 'securitySchemes' || !entries) continue
    for (const name of Object.keys(entries)) {
      if (
        !used.has(`#/components/${kind}/${encodeURIComponent(name)}`) &&
        !used.has(`#/components/${kind}/${name}`)
      )
        delete entries[name]
    }
  }
}
