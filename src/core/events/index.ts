export {
  type EmitOptions,
  EventBus,
  type EventBusOptions,
  type EventMap,
  type Listener,
  type ListenerFailure,
  ListenersFailedError,
} from './event-bus.ts'
export { ListenerInProgressError } from './listener-claim.ts'
