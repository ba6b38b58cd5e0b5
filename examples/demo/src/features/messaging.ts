import { desc } from 'drizzle-orm'
import { Hono } from 'hono'
import { html } from 'hono/html'
import type { JobHandlers } from 'kilnjs/core'
import {
  createOwnerDirectory,
  MESSAGING_ENV_VARS,
  messagingEnvStatus,
  PROCESS_MESSAGING_WEBHOOK,
} from 'kilnjs/messaging'
import type { DemoContext } from '../context.ts'
import { initMessaging, type Messaging } from '../messaging/index.ts'
import { loadOwnerPhones, seedOwners } from '../messaging/owners.ts'
import { page, pageHeaders } from '../pages/layout.ts'
import { messages } from '../schema.ts'

const started = new WeakMap<DemoContext, Promise<Messaging | undefined>>()

/**
 * The demo's messaging, once per context (the web routes and the job handlers share it).
 * Off when none of the MSG_* variables is set; a partial setup fails start-up naming the
 * missing ones.
 */
export function demoMessaging(ctx: DemoContext): Promise<Messaging | undefined> {
  let messaging = started.get(ctx)
  if (!messaging) {
    messaging = start(ctx)
    started.set(ctx, messaging)
  }
  return messaging
}

async function start(ctx: DemoContext): Promise<Messaging | undefined> {
  if (messagingEnvStatus(ctx.env).present.length === 0) return undefined
  const { db } = ctx.database
  await seedOwners(db, ctx.env.MSG_OWNER_PHONES)
  const owners = await createOwnerDirectory({
    load: () => loadOwnerPhones(db),
    refreshMs: 30_000,
    logger: ctx.logger,
  })
  return initMessaging({
    env: ctx.env,
    kv: ctx.shared.kv,
    queue: ctx.shared.queue,
    logger: ctx.logger,
    redactor: ctx.redactor,
    isOwner: owners.isOwner,
    db,
  })
}

/** Mounts the webhook (when messaging is configured) and the `/messages` page. */
export async function mountMessaging(app: Hono, ctx: DemoContext): Promise<void> {
  const messaging = await demoMessaging(ctx)
  if (messaging) app.route('/', messaging.routes)
  else ctx.logger.info(`messaging is off: set ${MESSAGING_ENV_VARS.join(', ')} to enable it`)
  app.route('/', messagesPage(ctx, messaging !== undefined))
}

/** The ProcessMessagingWebhook job, for the web process (memory queue) and `kilnjs queue:work`. */
export function messagingJobs(ctx: DemoContext): JobHandlers {
  if (messagingEnvStatus(ctx.env).present.length === 0) return {}
  // Started now, so a configuration problem shows when the worker starts, not at the first job.
  demoMessaging(ctx).catch((error: unknown) =>
    ctx.logger.error({ err: error }, 'messaging could not start'),
  )
  return {
    [PROCESS_MESSAGING_WEBHOOK]: async (payload, job) => {
      const messaging = await demoMessaging(ctx)
      const handler = messaging?.jobHandlers[PROCESS_MESSAGING_WEBHOOK]
      if (!handler) throw new Error('messaging is not configured in this process')
      await handler(payload, job)
    },
  }
}

/** `/messages`: the latest inbound messages and delivery statuses, for a signed-in user. */
function messagesPage(ctx: DemoContext, enabled: boolean): Hono {
  const app = new Hono()
  app.get('/messages', async (c) => {
    pageHeaders(c)
    const session = await ctx.sessions.current(c.req.raw)
    if (!session) return c.redirect('/login?return_to=%2Fmessages', 303)
    const rows = await ctx.database.db
      .select()
      .from(messages)
      .orderBy(desc(messages.createdAt), desc(messages.id))
      .limit(100)
    const callback = `${ctx.config.appUrl}/messaging/webhook`
    return c.html(
      page(
        'Messages',
        html`${
          enabled
            ? html`<p>Webhook: <code>${callback}</code> (fields <code>messages</code> and
                <code>message_status</code>).</p>`
            : html`<p class="error">Messaging is off: set ${MESSAGING_ENV_VARS.join(', ')}.</p>`
        }
          ${
            rows.length === 0
              ? html`<p>No messages yet.</p>`
              : html`<table>
                  <tr><th>When</th><th>Direction</th><th>Phone</th><th>From</th><th>Text</th><th>Status</th></tr>
                  ${rows.map(
                    (row) =>
                      html`<tr data-wamid="${row.wamid}">
                        <td>${(row.sentAt ?? row.statusAt ?? row.createdAt).toISOString()}</td>
                        <td>${row.direction}</td>
                        <td>${row.phone ?? ''}</td>
                        <td>${row.senderKind ?? ''}</td>
                        <td>${row.body ?? ''}</td>
                        <td>${row.status ?? ''}${row.errorCode ? ` (error ${row.errorCode})` : ''}</td>
                      </tr>`,
                  )}
                </table>`
          }`,
      ),
    )
  })
  return app
}
