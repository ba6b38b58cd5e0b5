import { readFileSync } from 'node:fs'

export interface FixtureRequest {
  method: string
  url: string
  path: string
  query?: Record<string, string>
  headers: Record<string, string>
  body: unknown
}

export interface Fixture {
  provider: string
  input: { baseUrl: string; paths: string[]; endpointId?: string; zoneId?: string }
  requests: FixtureRequest[]
  response: { status: number; body: unknown }
  errorResponses: { status: number; body: unknown; headers?: Record<string, string> }[]
}

export function loadFixture(name: 'digitalocean' | 'bunny' | 'cloudflare'): Fixture {
  const file = new URL(`../../fixtures/cdn/${name}-purge.json`, import.meta.url)
  return JSON.parse(readFileSync(file, 'utf8')) as Fixture
}

/** The path and query of a fixture URL, relative to the provider's API base. */
export function relativeTo(apiBase: string, url: string): string {
  return url.slice(apiBase.length)
}
