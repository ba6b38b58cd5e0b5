import type { Context } from 'hono'

/**
 * Per-request values of kiln's middlewares, kept in the context's own variables. A `WeakMap`
 * keyed by the short-lived context would do the same, but every entry makes the garbage
 * collector's work on young objects heavier, which measured as several µs per request.
 */
export function contextValue<T>(c: Context, key: string): T | undefined {
  return (c.get as (key: string) => T | undefined)(key)
}

export function setContextValue(c: Context, key: string, value: unknown): void {
  ;(c.set as (key: string, value: unknown) => void)(key, value)
}
