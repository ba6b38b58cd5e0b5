import { ManualClock } from 'kilnjs/core'

/** A manual clock plus a sleep that advances it, recording each wait. */
export function fakeTime() {
  const clock = new ManualClock(Date.UTC(2026, 0, 1))
  const sleeps: number[] = []
  const sleep = async (ms: number) => {
    sleeps.push(ms)
    clock.advance(ms)
  }
  return { clock, sleep, sleeps }
}
