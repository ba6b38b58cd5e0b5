/** A socket, or any stream that buffers writes while corked. */
export interface Corkable {
  cork(): void
  uncork(): void
}

/** The streams corked by `corkUntilTheLoopTurns`, until their uncork runs. */
const corked = new WeakSet<Corkable>()

/**
 * Corks a connection's socket until this turn of the event loop ends (`setImmediate`), so the
 * commands of requests that arrive together (each read in its own I/O callback of the same
 * turn) leave in one socket write, as a pipeline's would, and the server answers them in one
 * read. A command waits at most for the rest of the turn; a lone one leaves at its end.
 * Used for Redis's rate-limit counts, BullMQ's batched adds and PostgreSQL's pipelined
 * queries; measured in docs/performance-archive.md ("PostgreSQL pipelining", "The show path").
 */
export function corkUntilTheLoopTurns(stream: Corkable | undefined): void {
  if (!stream || corked.has(stream)) return
  corked.add(stream)
  stream.cork()
  setImmediate(() => {
    corked.delete(stream)
    stream.uncork()
  })
}
