export { declaringSubscribe, isListen, serveListen } from './listen.ts'
export { answerSubscribeCall, isSubscribeCall, serveSessionStream } from './session.ts'
export {
  internalsOf,
  type McpSubscriptions,
  type McpSubscriptionsOptions,
  mcpSubscriptions,
} from './subscriptions.ts'
export type { ChangeSource, FeedEvent } from './watcher.ts'
