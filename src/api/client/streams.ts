import type { JsonSchema } from '../openapi/types.ts'
import { STREAM_RUNTIME } from './stream-runtime.ts'
import { type Parameter, propertyName, queryType, tsType } from './ts-types.ts'

/** The media type of an event stream, by which a resource's stream is found. */
const EVENT_STREAM = 'text/event-stream'

/** A documented operation, as the generator reads it. */
interface StreamOperation {
  path: string
  operation: {
    parameters?: Parameter[]
    responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>
  }
}

/** Whether an operation answers an event stream (`GET /{resource}/events`). */
export function isStream(operation: StreamOperation['operation']): boolean {
  return operation.responses?.['200']?.content?.[EVENT_STREAM]?.schema !== undefined
}

/**
 * The client's `subscribe(resource, { filter })`: for each resource with a documented stream,
 * its query type (the stream's parameters: the list grammar's filter, fields, search) and its
 * event type (the documented event schema, its `data` parsed), and one member that opens any
 * of them as an async iterator. Nothing when no resource documents a stream.
 */
export function streamSource(
  streams: ReadonlyArray<{ name: string; r: string } & StreamOperation>,
) {
  if (streams.length === 0) return { types: [], runtime: '', setup: [], member: [] }
  const types: string[] = []
  for (const { r, path, operation } of streams) {
    const event = operation.responses?.['200']?.content?.[EVENT_STREAM]?.schema ?? {}
    types.push(
      `/** An event of \`GET ${path}\`: \`data\` is the record as a GET of it answers the key. */`,
      `export type ${r}Event = ${tsType(event, '')}`,
      '',
      `/** The query of \`GET ${path}\`: what narrows the stream and what its records show. */`,
      `export interface ${r}EventsQuery ${queryType(operation.parameters ?? [])}`,
      '',
    )
  }
  types.push(
    '/** Each resource that streams its changes: its query and its events. */',
    'export interface Streams {',
    ...streams.map(
      ({ name, r }) => `  ${propertyName(name)}: { query: ${r}EventsQuery; event: ${r}Event }`,
    ),
    '}',
    '',
    'const STREAM_PATHS: { [R in keyof Streams]: string } = {',
    ...streams.map(({ name, path }) => `  ${propertyName(name)}: ${JSON.stringify(path)},`),
    '}',
    '',
  )
  return {
    types,
    runtime: STREAM_RUNTIME,
    setup: ['  const stream = subscriber(options)'],
    member: [
      "    /** A resource's changes as they happen: an async iterator of its typed events. */",
      '    subscribe: <R extends keyof Streams>(',
      '      resource: R,',
      "      options: SubscribeOptions<Streams[R]['query']> = {} as SubscribeOptions<Streams[R]['query']>,",
      "    ): AsyncGenerator<Streams[R]['event']> => stream<Streams[R]['event']>(STREAM_PATHS[resource], options),",
    ],
  }
}
