import { KilnError } from '../../core/errors.ts'
import { entityTag } from './http-cache.ts'

/** 412: an `If-Match` precondition failed, the record changed since the client read it. */
export class PreconditionFailedError extends KilnError {
  override readonly code = 'precondition_failed'
}

/**
 * Evaluates `If-Match` before a write (PUT, PATCH, DELETE): the write goes on when the header
 * is absent, is `*`, or lists the strong ETag that `show` sends for the record as it is now;
 * otherwise a 412 `PreconditionFailedError`, and nothing changes. That is lost-update
 * protection: read a record, send its ETag back with the change, and a change someone made in
 * between is never overwritten unseen.
 *
 * `current` gives the record as `show` answers it (`{ data: resource }`), or undefined when
 * there is none: the handler then answers 404 as without the header (a condition is ignored
 * when the answer would be neither 2xx nor 412). It is only read when the header is present.
 * @example
 * ```ts
 * await checkIfMatch(c.req.raw, async () => ({ data: { id: userId, name: 'Ada' } }))
 * ```
 * @see RFC 9110 §13.1.1 (If-Match: strong comparison), §13.2.1
 */
export async function checkIfMatch(
  request: Request,
  current: () => PromiseLike<unknown>,
): Promise<void> {
  const header = request.headers.get('if-match')
  if (header === null) return
  const representation = await current()
  if (representation === undefined) return
  if (header.trim() === '*') return
  const tag = entityTag(JSON.stringify(representation))
  if (!strongMatch(header, tag)) throw new PreconditionFailedError('Precondition Failed')
}

/** Whether a list of entity tags holds `tag` by strong comparison: weak tags never match. */
function strongMatch(header: string, tag: string): boolean {
  for (const [candidate, weak] of header.matchAll(/(W\/)?"[^"]*"/g)) {
    if (weak === undefined && candidate === tag) return true
  }
  return false
}
