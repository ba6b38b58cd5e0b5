/**
 * Counts the writes a socket makes from now until `restore()`: a corked batch of commands or
 * queries is one `_writev`, each uncorked one its own `_write`. Pass a client's socket (an
 * ioredis client's `stream`, a pg connection's).
 */
export function countSocketWrites(socket: unknown): { writes: number; restore(): void } {
  const target = socket as Record<'_write' | '_writev', (...args: unknown[]) => void>
  const { _write: write, _writev: writev } = target
  const counter = {
    writes: 0,
    restore() {
      target._write = write
      target._writev = writev
    },
  }
  target._write = (...args) => {
    counter.writes++
    write.apply(target, args)
  }
  target._writev = (...args) => {
    counter.writes++
    writev.apply(target, args)
  }
  return counter
}
