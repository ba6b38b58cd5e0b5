import type { z } from 'zod'

type RawIssue = z.core.$ZodRawIssue

/** Number formats whose values are whole numbers (`z.int()`, `z.int32()`, …). */
const INTEGER_FORMATS = new Set(['safeint', 'int32', 'uint32', 'int64', 'uint64'])

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'a boolean',
  date: 'a date',
  object: 'an object',
  record: 'an object',
  map: 'an object',
  array: 'an array',
  tuple: 'an array',
  set: 'an array',
  null: 'null',
}

const FORMAT_NAMES: Record<string, string> = {
  email: 'an email address',
  url: 'a URL',
  uuid: 'a UUID',
  guid: 'a UUID',
  datetime: 'an ISO 8601 date-time',
  date: 'a date (YYYY-MM-DD)',
  time: 'a time (HH:MM:SS)',
  duration: 'an ISO 8601 duration',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  base64: 'base64',
  base64url: 'base64url',
  lowercase: 'lowercase',
  uppercase: 'uppercase',
}

/**
 * A zod error map giving every validation message one voice: "is required" when the field is
 * absent, otherwise what was expected ("must be a string", "must be an integer", "must be at
 * most 255 characters", "must be one of "draft", "published""). It works from the issue codes
 * alone, so any schema gets these messages; a message a schema sets itself still wins.
 *
 * Pass it to a parse (`schema.safeParse(value, { error: validationMessage })`); `validate`
 * does.
 */
export function validationMessage(issue: RawIssue): string | undefined {
  if (issue.input === undefined && issue.code === 'invalid_type') return 'is required'
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === null) return 'must not be null'
      return `must be ${typeName(issue)}`
    case 'too_small':
      return tooSmall(issue.origin, issue.minimum, issue.inclusive !== false, issue.exact === true)
    case 'too_big':
      return tooBig(issue.origin, issue.maximum, issue.inclusive !== false, issue.exact === true)
    case 'invalid_format':
      return invalidFormat(issue)
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`
    case 'invalid_value':
      return mustBeOneOf(issue.values)
    case 'invalid_union':
      return invalidUnion(issue.errors)
    case 'invalid_key':
      return 'has an invalid key'
    case 'invalid_element':
      return 'has an invalid element'
    case 'unrecognized_keys':
      return 'is not a known field'
    default:
      return 'is not valid'
  }
}

/**
 * The catalogue's words for a value of the wrong type (`mustBe('string')` → "must be a
 * string") or format (`mustBe('uuid')` → "must be a UUID"): for checks made without a zod
 * schema (the MCP data tools' values), so both surfaces say the same thing.
 */
export function mustBe(kind: string): string {
  return `must be ${TYPE_NAMES[kind] ?? FORMAT_NAMES[kind] ?? kind}`
}

/** `must be one of "draft", "published"`, as an enum's refusal reads. */
export function mustBeOneOf(values: readonly unknown[]): string {
  return values.length === 1
    ? `must be ${quote(values[0])}`
    : `must be one of ${values.map(quote).join(', ')}`
}

function typeName(issue: RawIssue & { expected: string }): string {
  if (issue.expected === 'number') {
    if (INTEGER_FORMATS.has(String(numberFormat(issue)))) return 'an integer'
    if (typeof issue.input === 'number') return 'a finite number'
  }
  return TYPE_NAMES[issue.expected] ?? issue.expected
}

/** The `format` of the number schema that raised the issue (`safeint` for `z.int()`). */
function numberFormat(issue: RawIssue): unknown {
  const def: unknown = issue.inst?._zod.def
  return typeof def === 'object' && def !== null && 'format' in def ? def.format : undefined
}

function tooSmall(origin: string, min: number | bigint, inclusive: boolean, exact: boolean) {
  if (origin === 'string') {
    if (exact) return `must be exactly ${count(min, 'character')}`
    return Number(min) === 1 ? 'must not be empty' : `must be at least ${count(min, 'character')}`
  }
  if (origin === 'array' || origin === 'set') {
    if (exact) return `must have exactly ${count(min, 'item')}`
    return `must have at least ${count(min, 'item')}`
  }
  if (origin === 'date') return `must be on or after ${dateOf(min)}`
  if (origin === 'file') return `must be at least ${count(min, 'byte')}`
  return inclusive ? `must be at least ${min}` : `must be greater than ${min}`
}

function tooBig(origin: string, max: number | bigint, inclusive: boolean, exact: boolean) {
  if (origin === 'string') {
    return `must be ${exact ? 'exactly' : 'at most'} ${count(max, 'character')}`
  }
  if (origin === 'array' || origin === 'set') {
    return `must have ${exact ? 'exactly' : 'at most'} ${count(max, 'item')}`
  }
  if (origin === 'date') return `must be on or before ${dateOf(max)}`
  if (origin === 'file') return `must be at most ${count(max, 'byte')}`
  return inclusive ? `must be at most ${max}` : `must be less than ${max}`
}

function invalidFormat(issue: RawIssue & { format: string }): string {
  const detail = issue as Record<string, unknown>
  switch (issue.format) {
    case 'starts_with':
      return `must start with ${quote(detail.prefix)}`
    case 'ends_with':
      return `must end with ${quote(detail.suffix)}`
    case 'includes':
      return `must include ${quote(detail.includes)}`
    case 'regex':
      return `must match the pattern ${String(detail.pattern)}`
    default:
      return `must be ${FORMAT_NAMES[issue.format] ?? `a valid ${issue.format}`}`
  }
}

/**
 * "must be a string or a number" when each alternative failed on its type alone; "is required"
 * and "must not be null" when every alternative said so (an absent or null field).
 */
function invalidUnion(branches: readonly (readonly z.core.$ZodIssue[])[]): string {
  for (const message of ['is required', 'must not be null']) {
    const all = branches.every((branch) => branch.length === 1 && branch[0]?.message === message)
    if (branches.length > 0 && all) return message
  }
  const expected = new Set<string>()
  for (const branch of branches) {
    const only = branch.length === 1 ? branch[0] : undefined
    if (!only?.message.startsWith('must be ') || only.path.length > 0) return 'is not valid'
    expected.add(only.message.slice('must be '.length))
  }
  return expected.size > 0 ? `must be ${[...expected].join(' or ')}` : 'is not valid'
}

function count(n: number | bigint, unit: string): string {
  return `${n} ${unit}${Number(n) === 1 ? '' : 's'}`
}

function dateOf(ms: number | bigint): string {
  return new Date(Number(ms)).toISOString()
}

function quote(value: unknown): string {
  return typeof value === 'bigint' ? String(value) : (JSON.stringify(value) ?? String(value))
}
