// The realtime core: the change feed kiln's writes publish to (ids per resource, a retained
// window for Last-Event-ID, every instance told through the shared pub/sub), and the
// server-sent event streams built on it.
export {
  CHANGE_KINDS,
  type Change,
  type ChangeEvent,
  type ChangeInput,
  type ChangeKind,
} from './changes.ts'
export type { ChangeFeed, ChangeListener, FeedSubscription } from './feed.ts'
export { DEFAULT_WINDOW, type RetainedWindow } from './log.ts'
export {
  createRealtime,
  type Realtime,
  type RealtimeOptions,
  type RealtimeStatus,
  type StreamRequest,
} from './realtime.ts'
export type { EndReason, StreamMessage } from './stream.ts'
