// `npm run sdk:types`: writes the SDK's types (packages/sdk/src/types.ts) from the service's OpenAPI document, so that
// the SDK states no shape of its own. `npm run sdk:types -- --check` writes nothing and fails when the file differs
// from what the document gives (CI runs it: the types cannot drift from the API).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compile, type JSONSchema } from 'json-schema-to-typescript'
import { loadConfig } from '../src/config.js'
import { startService } from '../src/main.js'
import { createLogger } from '../src/platform/logger.js'

const TARGET = 'packages/sdk/src/types.ts'

const api = (path: string) => `#/paths/${path.replaceAll('/', '~1')}`
const json = '/content/application~1json/schema'

/**
 * Every type the SDK exports, by name, and where the OpenAPI document defines it: a JSON pointer, or the query
 * parameters of an operation (without api_key, which the client sends as a header), or the non-null part of a nullable
 * field. Adding an endpoint to the SDK adds its shapes here.
 */
const SHAPES: Record<string, string | { query: string } | { notNull: string } | { anyOf: string[]; description: string }> = {
  PayloadType: '#/components/schemas/Payload/properties/type',
  PayloadStatus: '#/components/schemas/Payload/properties/status',
  PayloadEvent: '#/components/schemas/PayloadEventDelivery/properties/event',
  SubmissionOutcome: { notNull: '#/components/schemas/Payload/properties/submission/properties/outcome' },
  DeliveredAmount: '#/components/schemas/Payload/properties/submission/properties/deliveredAmount/anyOf/0',
  Submission: '#/components/schemas/Payload/properties/submission',
  Multisign: '#/components/schemas/Payload/properties/multisign',
  CreatePayloadRequest: `${api('/api/v1/payloads')}/post/requestBody${json}`,
  CreatedPayload: `${api('/api/v1/payloads')}/post/responses/201${json}`,
  Payload: '#/components/schemas/Payload',
  ListPayloadsOptions: { query: `${api('/api/v1/payloads')}/get` },
  PayloadList: `${api('/api/v1/payloads')}/get/responses/200${json}`,
  CreateWebhookRequest: `${api('/api/v1/webhooks')}/post/requestBody${json}`,
  Webhook: '#/components/schemas/Webhook',
  CreatedWebhook: `${api('/api/v1/webhooks')}/post/responses/201${json}`,
  ListDeliveriesOptions: { query: `${api('/api/v1/webhooks/{id}/deliveries')}/get` },
  DeliveryState: '#/components/schemas/WebhookDelivery/properties/state',
  DeliveryEvent: '#/components/schemas/WebhookDelivery/properties/event',
  Delivery: '#/components/schemas/WebhookDelivery',
  DeliveryList: `${api('/api/v1/webhooks/{id}/deliveries')}/get/responses/200${json}`,
  RotatedSecret: `${api('/api/v1/webhooks/{id}/rotate-secret')}/post/responses/200${json}`,
  ReplayRequest: `${api('/api/v1/webhooks/{id}/replay')}/post/requestBody${json}`,
  ReplayResult: `${api('/api/v1/webhooks/{id}/replay')}/post/responses/202${json}`,
  WebhookPayload: '#/components/schemas/WebhookPayload',
  PayloadEventDelivery: '#/components/schemas/PayloadEventDelivery',
  WebhookTestDelivery: '#/components/schemas/WebhookTestDelivery',
  WebhookDelivery: {
    anyOf: ['PayloadEventDelivery', 'WebhookTestDelivery'],
    description: 'The body of a webhook delivery: check `event` before reading `payload`, which a test event does not have',
  },
}

const BANNER =
  "// The API's shapes, generated from the OpenAPI document by `npm run sdk:types` (scripts/sdk-types.ts): do not edit.\n" +
  "// The descriptions are the service's own (docs/api.md, docs/webhooks.md)."

type Schema = { [key: string]: unknown }

async function openApiDocument(): Promise<Schema> {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-sdk-types-'))
  try {
    const config = loadConfig({
      PORT: '0',
      PUBLIC_URL: 'http://localhost:3000',
      DATABASE_URL: `sqlite:${join(dir, 'countersign.db')}`,
      SESSION_SECRET: 'sdk-types-'.repeat(4),
    })
    const service = await startService(config, { logger: createLogger('silent'), listen: false, workers: false })
    try {
      await service.app.ready()
      return service.app.swagger() as unknown as Schema
    } finally {
      await service.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function resolvePointer(document: Schema, pointer: string): Schema {
  let node: unknown = document
  for (const raw of pointer.replace(/^#\//, '').split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (typeof node !== 'object' || node === null || !(key in node)) throw new Error(`The OpenAPI document has nothing at ${pointer}`)
    node = (node as Schema)[key]
  }
  return node as Schema
}

/** A nullable field's schema without its null (and its description, which speaks of the field). */
function notNull(schema: Schema): Schema {
  const { nullable: _nullable, description: _description, ...value } = schema
  return value
}

/** The query parameters of an operation as one object schema. */
function querySchema(document: Schema, operationPointer: string): Schema {
  const parameters = (resolvePointer(document, operationPointer).parameters ?? []) as Schema[]
  const properties: Schema = {}
  const required: string[] = []
  for (const parameter of parameters) {
    if (parameter.in !== 'query' || parameter.name === 'api_key') continue
    const name = parameter.name as string
    properties[name] = { ...(parameter.schema as Schema), ...(parameter.description ? { description: parameter.description } : {}) }
    if (parameter.required) required.push(name)
  }
  return { type: 'object', properties, required, additionalProperties: false }
}

/**
 * OpenAPI 3.0 to JSON Schema for the generator: `nullable` becomes a null type, component references point at the
 * SDK's names, and $id and defaults (which the server fills in, so they are not the client's concern) go.
 */
function toJsonSchema(node: unknown, componentNames: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((item) => toJsonSchema(item, componentNames))
  if (typeof node !== 'object' || node === null) return node
  const schema = node as Schema
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/definitions/')) return schema
  if (typeof schema.$ref === 'string') {
    const component = schema.$ref.replace('#/components/schemas/', '')
    const name = componentNames.get(component)
    if (!name) throw new Error(`${schema.$ref} is not one of the SDK's shapes: add it to SHAPES`)
    return { $ref: `#/definitions/${name}` }
  }
  const result: Schema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$id' || key === 'nullable' || key === 'default' || key === 'title') continue
    result[key] =
      key === 'properties' || key === 'definitions' ? mapValues(value as Schema, componentNames) : toJsonSchema(value, componentNames)
  }
  if (schema.nullable === true) {
    // `{enum: [null], nullable: true}` is how the document writes null itself.
    if (Array.isArray(schema.enum) && schema.enum.length === 1 && schema.enum[0] === null) return { type: 'null' }
    const { description, ...value } = result
    return { anyOf: [value, { type: 'null' }], ...(description === undefined ? {} : { description }) }
  }
  return result
}

function mapValues(properties: Schema, componentNames: Map<string, string>): Schema {
  return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, toJsonSchema(value, componentNames)]))
}

async function generate(): Promise<string> {
  const document = await openApiDocument()
  const componentNames = new Map<string, string>()
  for (const [name, source] of Object.entries(SHAPES)) {
    if (typeof source === 'string' && /^#\/components\/schemas\/[^/]+$/.test(source))
      componentNames.set(source.split('/').pop() as string, name)
  }
  const definitions: Record<string, Schema> = {}
  for (const [name, source] of Object.entries(SHAPES)) {
    const schema =
      typeof source === 'string'
        ? resolvePointer(document, source)
        : 'query' in source
          ? querySchema(document, source.query)
          : 'notNull' in source
            ? notNull(resolvePointer(document, source.notNull))
            : { anyOf: source.anyOf.map((shape) => ({ $ref: `#/definitions/${shape}` })), description: source.description }
    definitions[name] = { ...(toJsonSchema(schema, componentNames) as Schema), title: name }
  }
  const named = namedShapes(definitions)
  for (const [name, definition] of Object.entries(definitions)) definitions[name] = referToNamed(definition, named) as Schema
  const root: JSONSchema = { title: 'ApiShapes', type: 'object', additionalProperties: false, definitions } as JSONSchema
  const typescript = await compile(root, 'ApiShapes', {
    bannerComment: BANNER,
    unreachableDefinitions: true,
    additionalProperties: false,
    declareExternallyReferenced: true,
    format: false,
    ignoreMinAndMaxItems: true,
  })
  // The root only carries the definitions: its own (empty) declaration is not a shape of the API, nor are the
  // generator's notes on where each definition was found.
  return formatted(typescript.replace(/export interface ApiShapes \{\s*\}\n/, ''))
    .replace(/\/\*\*\n \* This interface was referenced by .*\n \* via the `definition` ".*"\.\n \*\/\n/g, '')
    .replace(/ \*\n \* This interface was referenced by .*\n \* via the `definition` ".*"\.\n/g, '')
}

/** A schema's identity as a shape: everything but its name and descriptions. */
function shapeKey(node: unknown): string {
  return JSON.stringify(node, (key, value) => (key === 'title' || key === 'description' ? undefined : value))
}

/** Every shape the SDK names (PayloadType, Multisign...), by its identity. */
function namedShapes(definitions: Record<string, Schema>): Map<string, string> {
  const named = new Map<string, string>()
  for (const [name, definition] of Object.entries(definitions)) named.set(shapeKey(definition), name)
  return named
}

/** Every part of a definition that is another named shape becomes a reference to it, so that Payload.type reads PayloadType. */
function referToNamed(node: unknown, named: Map<string, string>, isRoot = true): unknown {
  if (Array.isArray(node)) return node.map((item) => referToNamed(item, named, false))
  if (typeof node !== 'object' || node === null) return node
  const schema = node as Schema
  const name = isRoot ? undefined : named.get(shapeKey(schema))
  if (name) return { tsType: name, ...(schema.description ? { description: schema.description } : {}) }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, referToNamed(value, named, false)]))
}

/** The project's formatter, so that the file reads like the rest and the check compares like with like. */
function formatted(source: string): string {
  const biome = spawnSync(join('node_modules', '.bin', 'biome'), ['format', `--stdin-file-path=${TARGET}`], {
    input: source,
    encoding: 'utf8',
  })
  if (biome.status !== 0) throw new Error(`biome could not format the generated types: ${biome.stderr}`)
  return biome.stdout
}

const check = process.argv.includes('--check')
const generated = await generate()
if (check) {
  const current = readFileSync(TARGET, 'utf8')
  if (current !== generated) {
    process.stderr.write(`${TARGET} does not match the OpenAPI document: run \`npm run sdk:types\` and commit the result.\n`)
    process.exit(1)
  }
  process.stdout.write(`${TARGET} matches the OpenAPI document.\n`)
} else {
  writeFileSync(TARGET, generated)
  process.stdout.write(`Wrote ${TARGET} from the OpenAPI document.\n`)
}
