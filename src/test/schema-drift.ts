/**
 * Compares what prisma/schema.prisma declares with what a migrated database
 * holds, in one normalised shape, so a schema change without its migration
 * (or a migration that does not match the schema) fails a test.
 *
 * Expected side: Prisma's DMMF (`getDMMF` from @prisma/internals) with
 * Prisma Migrate's conventions for what the DMMF leaves implicit — default
 * constraint names (`<table>_pkey`, `_key`, `_idx`, `_fkey`), native types,
 * nullable scalar lists, referential actions (Restrict when the relation is
 * required, SetNull when optional; Cascade on update).
 * Actual side: pg_catalog of one schema.
 */
import type pg from 'pg'

export interface ColumnShape {
  type: string
  notNull: boolean
  default: string | null
}

export interface TableShape {
  columns: Record<string, ColumnShape>
  primaryKey: { name: string; columns: string[] } | null
  /** Indexes other than the primary key's; columns as `name [DESC] [opclass]`. */
  indexes: Record<string, { unique: boolean; method: string; columns: string[] }>
  foreignKeys: Record<
    string,
    {
      columns: string[]
      referencedTable: string
      referencedColumns: string[]
      onDelete: string
      onUpdate: string
    }
  >
}

export interface SchemaShape {
  tables: Record<string, TableShape>
  enums: Record<string, string[]>
}

// ───────────────────────── expected: from schema.prisma ─────────────────────────

interface DmmfField {
  name: string
  dbName?: string | null
  kind: 'scalar' | 'object' | 'enum' | 'unsupported'
  type: string
  isList: boolean
  isRequired: boolean
  isId: boolean
  isUpdatedAt: boolean
  hasDefaultValue: boolean
  default?: unknown
  nativeType?: [string, string[]] | null
  relationFromFields?: string[]
  relationToFields?: string[]
  relationOnDelete?: string
  relationOnUpdate?: string
}

interface DmmfModel {
  name: string
  dbName: string | null
  fields: DmmfField[]
  primaryKey: { name: string | null; fields: string[] } | null
}

interface DmmfIndex {
  model: string
  type: 'id' | 'normal' | 'unique' | 'fulltext'
  dbName?: string | null
  algorithm?: string
  fields: { name: string; sortOrder?: 'asc' | 'desc'; operatorClass?: string }[]
}

interface DmmfEnum {
  name: string
  dbName?: string | null
  values: { name: string; dbName?: string | null }[]
}

interface Dmmf {
  datamodel: { models: DmmfModel[]; enums: DmmfEnum[]; indexes: DmmfIndex[] }
}

async function loadGetDmmf(): Promise<(options: { datamodel: string }) => Promise<Dmmf>> {
  // CommonJS package: its functions sit on `default` or on the namespace, depending on the loader.
  const internals = (await import('@prisma/internals')) as unknown as Record<string, unknown> & {
    default?: Record<string, unknown>
  }
  const getDMMF = internals.getDMMF ?? internals.default?.getDMMF
  if (typeof getDMMF !== 'function') throw new Error('@prisma/internals has no getDMMF')
  return getDMMF as (options: { datamodel: string }) => Promise<Dmmf>
}

const referentialActions: Record<string, string> = {
  Cascade: 'CASCADE',
  Restrict: 'RESTRICT',
  NoAction: 'NO ACTION',
  SetNull: 'SET NULL',
  SetDefault: 'SET DEFAULT',
}

export async function expectedSchema(datamodel: string): Promise<SchemaShape> {
  const getDMMF = await loadGetDmmf()
  const { models, enums, indexes } = (await getDMMF({ datamodel })).datamodel
  const tableOf = new Map(models.map((model) => [model.name, model.dbName ?? model.name]))
  const enumTypeOf = new Map(enums.map((e) => [e.name, e.dbName ?? e.name]))
  const shape: SchemaShape = { tables: {}, enums: {} }

  for (const e of enums) shape.enums[e.dbName ?? e.name] = e.values.map((v) => v.dbName ?? v.name)

  for (const model of models) {
    const table = tableOf.get(model.name) ?? model.name
    const columnOf = new Map(model.fields.map((field) => [field.name, field.dbName ?? field.name]))
    const col = (field: string) => columnOf.get(field) ?? field
    const tableShape: TableShape = { columns: {}, primaryKey: null, indexes: {}, foreignKeys: {} }

    for (const field of model.fields) {
      if (field.kind !== 'scalar' && field.kind !== 'enum') continue
      const column = col(field.name)
      const type = columnType(field, enumTypeOf)
      tableShape.columns[column] = {
        type,
        // Prisma leaves scalar-list columns nullable.
        notNull: field.isRequired && !field.isList,
        default: expectedDefault(field, table, column, type),
      }
    }

    for (const index of indexes.filter((i) => i.model === model.name)) {
      const columns = index.fields.map((f) => col(f.name))
      if (index.type === 'id') {
        tableShape.primaryKey = { name: index.dbName ?? model.primaryKey?.name ?? `${table}_pkey`, columns }
        continue
      }
      const unique = index.type === 'unique'
      const name = index.dbName ?? `${table}_${columns.join('_')}_${unique ? 'key' : 'idx'}`
      tableShape.indexes[name] = {
        unique,
        method: (index.algorithm ?? 'BTree').toLowerCase(),
        columns: index.fields.map((f) => indexColumn(col(f.name), f.sortOrder === 'desc', f.operatorClass)),
      }
    }

    for (const field of model.fields) {
      if (field.kind !== 'object' || !field.relationFromFields?.length) continue
      const fromFields = field.relationFromFields
      const fromColumns = fromFields.map(col)
      const target = models.find((m) => m.name === field.type)
      const targetColumns = new Map(target?.fields.map((f) => [f.name, f.dbName ?? f.name]))
      const required = fromFields.every((name) => model.fields.find((f) => f.name === name)?.isRequired)
      tableShape.foreignKeys[`${table}_${fromColumns.join('_')}_fkey`] = {
        columns: fromColumns,
        referencedTable: tableOf.get(field.type) ?? field.type,
        referencedColumns: (field.relationToFields ?? []).map((name) => targetColumns.get(name) ?? name),
        onDelete: referentialActions[field.relationOnDelete ?? (required ? 'Restrict' : 'SetNull')] ?? '?',
        onUpdate: referentialActions[field.relationOnUpdate ?? 'Cascade'] ?? '?',
      }
    }
    shape.tables[table] = tableShape
  }
  return shape
}

/** The type as PostgreSQL's format_type() writes it. */
function columnType(field: DmmfField, enumTypeOf: Map<string, string>): string {
  const base =
    field.kind === 'enum' ? quoteIfNeeded(enumTypeOf.get(field.type) ?? field.type) : scalarType(field)
  return field.isList ? `${base}[]` : base
}

function scalarType(field: DmmfField): string {
  const [native, args = []] = field.nativeType ?? []
  const withArgs = (name: string) => (args.length ? `${name}(${args.join(',')})` : name)
  if (native) {
    switch (native) {
      case 'VarChar':
        return withArgs('character varying')
      case 'Char':
        return withArgs('character')
      case 'Text':
        return 'text'
      case 'Uuid':
        return 'uuid'
      case 'Decimal':
        return withArgs('numeric')
      case 'Timestamptz':
        return `${withArgs('timestamp')} with time zone`
      case 'Timestamp':
        return `${withArgs('timestamp')} without time zone`
      case 'Time':
        return `${withArgs('time')} without time zone`
      case 'Timetz':
        return `${withArgs('time')} with time zone`
      case 'Date':
        return 'date'
      case 'SmallInt':
        return 'smallint'
      case 'Integer':
        return 'integer'
      case 'BigInt':
        return 'bigint'
      case 'Real':
        return 'real'
      case 'DoublePrecision':
        return 'double precision'
      case 'Boolean':
        return 'boolean'
      case 'Json':
        return 'json'
      case 'JsonB':
        return 'jsonb'
      case 'ByteA':
        return 'bytea'
      case 'Inet':
        return 'inet'
      case 'Citext':
        return 'citext'
      default:
        throw new Error(`schema-drift: native type @db.${native} is not mapped yet; add it to scalarType()`)
    }
  }
  const defaults: Record<string, string> = {
    String: 'text',
    Int: 'integer',
    BigInt: 'bigint',
    Float: 'double precision',
    Decimal: 'numeric(65,30)',
    Boolean: 'boolean',
    DateTime: 'timestamp(3) without time zone',
    Json: 'jsonb',
    Bytes: 'bytea',
  }
  const type = defaults[field.type]
  if (!type)
    throw new Error(`schema-drift: Prisma type ${field.type} is not mapped yet; add it to scalarType()`)
  return type
}

/** The default as pg_get_expr() writes it; null when the database has none (client-side defaults included). */
function expectedDefault(field: DmmfField, table: string, column: string, type: string): string | null {
  if (!field.hasDefaultValue) return null
  const value = field.default
  if (value && typeof value === 'object' && !Array.isArray(value) && 'name' in value) {
    const fn = value as { name: string; args?: unknown[] }
    if (fn.name === 'autoincrement') return `nextval('${table}_${column}_seq'::regclass)`
    if (fn.name === 'now') return 'CURRENT_TIMESTAMP'
    if (fn.name === 'dbgenerated') return typeof fn.args?.[0] === 'string' ? fn.args[0] : null
    return null // uuid(), cuid(), nanoid(): generated by Prisma Client
  }
  const castType = type
    .replace(/\(.*\)/, '')
    .replace(/\[\]$/, '')
    .replace(/^character$/, 'bpchar')
  const numeric = ['Int', 'BigInt', 'Float', 'Decimal'].includes(field.type)
  const literal = (v: unknown) => {
    if (typeof v === 'boolean') return String(v)
    // The DMMF gives BigInt defaults as strings; PostgreSQL prints negative numbers quoted and cast.
    if (numeric) return String(v).startsWith('-') ? `'${v}'::${castType}` : String(v)
    return `'${String(v).replaceAll("'", "''")}'::${castType}`
  }
  if (Array.isArray(value)) {
    return value.length === 0 ? `ARRAY[]::${castType}[]` : `ARRAY[${value.map(literal).join(', ')}]`
  }
  return literal(value)
}

function indexColumn(column: string, descending: boolean, operatorClass: string | undefined): string {
  return [quoteIfNeeded(column), descending ? 'DESC' : '', operatorClass ?? ''].filter(Boolean).join(' ')
}

function quoteIfNeeded(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`
}

// ───────────────────────── actual: from pg_catalog ─────────────────────────

const actionCodes: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
}

/**
 * `client` must have `schema` first on its search_path, so that defaults
 * read back unqualified (nextval('collections_id_seq'::regclass)).
 */
export async function actualSchema(
  client: pg.Pool | pg.PoolClient,
  schema: string,
  ignoreTables: string[] = ['_prisma_migrations'],
): Promise<SchemaShape> {
  const shape: SchemaShape = { tables: {}, enums: {} }
  const table = (name: string) => {
    shape.tables[name] ??= { columns: {}, primaryKey: null, indexes: {}, foreignKeys: {} }
    return shape.tables[name]
  }

  const tables = await client.query<{ table: string }>(
    `SELECT c.relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')`,
    [schema],
  )
  for (const row of tables.rows) if (!ignoreTables.includes(row.table)) table(row.table)

  const columns = await client.query<{
    table: string
    column: string
    type: string
    not_null: boolean
    default: string | null
  }>(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default
     FROM pg_attribute a
     JOIN pg_class c ON c.oid = a.attrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped`,
    [schema],
  )
  for (const row of columns.rows) {
    if (ignoreTables.includes(row.table)) continue
    table(row.table).columns[row.column] = { type: row.type, notNull: row.not_null, default: row.default }
  }

  const indexColumns = await client.query<{
    index: string
    table: string
    unique: boolean
    primary: boolean
    method: string
    column: string
    descending: boolean
    opclass: string
    opclass_default: boolean
  }>(
    `SELECT i.relname AS index, t.relname AS table, ix.indisunique AS unique, ix.indisprimary AS primary,
            am.amname AS method, a.attname AS column, (k.option & 1) = 1 AS descending,
            opc.opcname AS opclass,
            -- Implicit in schema.prisma: a built-in default. An extension's (btree_gin's varchar_ops
            -- for a GIN index on a varchar column) must be named there, default or not.
            opc.opcdefault AND opc.opcnamespace = 'pg_catalog'::regnamespace AS opclass_default
     FROM pg_index ix
     JOIN pg_class i ON i.oid = ix.indexrelid
     JOIN pg_class t ON t.oid = ix.indrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     JOIN pg_am am ON am.oid = i.relam
     CROSS JOIN LATERAL unnest(ix.indkey::int2[], ix.indclass::oid[], ix.indoption::int2[])
       WITH ORDINALITY AS k(attnum, opclass, option, position)
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
     JOIN pg_opclass opc ON opc.oid = k.opclass
     WHERE n.nspname = $1
     ORDER BY i.relname, k.position`,
    [schema],
  )
  for (const row of indexColumns.rows) {
    if (ignoreTables.includes(row.table)) continue
    const t = table(row.table)
    if (row.primary) {
      t.primaryKey ??= { name: row.index, columns: [] }
      t.primaryKey.columns.push(row.column)
      continue
    }
    t.indexes[row.index] ??= { unique: row.unique, method: row.method, columns: [] }
    t.indexes[row.index]?.columns.push(
      indexColumn(row.column, row.descending, row.opclass_default ? undefined : row.opclass),
    )
  }

  const foreignKeys = await client.query<{
    name: string
    table: string
    columns: string[]
    referenced_table: string
    referenced_columns: string[]
    on_delete: string
    on_update: string
  }>(
    `SELECT con.conname AS name, t.relname AS table,
            array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(attnum, position)
                  JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.position) AS columns,
            rt.relname AS referenced_table,
            array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(attnum, position)
                  JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.position)
              AS referenced_columns,
            con.confdeltype AS on_delete, con.confupdtype AS on_update
     FROM pg_constraint con
     JOIN pg_class t ON t.oid = con.conrelid
     JOIN pg_class rt ON rt.oid = con.confrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = $1 AND con.contype = 'f'`,
    [schema],
  )
  for (const row of foreignKeys.rows) {
    if (ignoreTables.includes(row.table)) continue
    table(row.table).foreignKeys[row.name] = {
      columns: row.columns,
      referencedTable: row.referenced_table,
      referencedColumns: row.referenced_columns,
      onDelete: actionCodes[row.on_delete] ?? row.on_delete,
      onUpdate: actionCodes[row.on_update] ?? row.on_update,
    }
  }

  const enums = await client.query<{ name: string; values: string[] }>(
    `SELECT t.typname AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder) AS values
     FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = $1 GROUP BY t.typname`,
    [schema],
  )
  for (const row of enums.rows) shape.enums[row.name] = row.values
  return shape
}

// ───────────────────────── the difference ─────────────────────────

/** Human-readable differences; empty when the database matches the schema. */
export function diffSchemas(expected: SchemaShape, actual: SchemaShape): string[] {
  const problems: string[] = []
  const sides = (a: object, b: object) => [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()
  const show = (value: unknown) => JSON.stringify(value)

  for (const name of sides(expected.enums, actual.enums)) {
    const [e, a] = [expected.enums[name], actual.enums[name]]
    if (show(e) !== show(a)) problems.push(`enum ${name}: schema.prisma ${show(e)}, database ${show(a)}`)
  }

  for (const name of sides(expected.tables, actual.tables)) {
    const e = expected.tables[name]
    const a = actual.tables[name]
    if (!e || !a) {
      problems.push(
        `table ${name}: ${e ? 'in schema.prisma but not in the database' : 'in the database but not in schema.prisma'}`,
      )
      continue
    }
    for (const column of sides(e.columns, a.columns)) {
      const [ec, ac] = [e.columns[column], a.columns[column]]
      if (!ec || !ac) {
        problems.push(
          `column ${name}.${column}: ${ec ? 'in schema.prisma but not in the database' : 'in the database but not in schema.prisma'}`,
        )
      } else if (show(ec) !== show(ac)) {
        problems.push(`column ${name}.${column}: schema.prisma ${show(ec)}, database ${show(ac)}`)
      }
    }
    if (show(e.primaryKey) !== show(a.primaryKey)) {
      problems.push(
        `primary key of ${name}: schema.prisma ${show(e.primaryKey)}, database ${show(a.primaryKey)}`,
      )
    }
    for (const kind of ['indexes', 'foreignKeys'] as const) {
      const label = kind === 'indexes' ? 'index' : 'foreign key'
      for (const item of sides(e[kind], a[kind])) {
        const [ei, ai] = [e[kind][item], a[kind][item]]
        if (show(ei) !== show(ai)) {
          problems.push(
            `${label} ${name}.${item}: schema.prisma ${show(ei ?? null)}, database ${show(ai ?? null)}`,
          )
        }
      }
    }
  }
  return problems
}
