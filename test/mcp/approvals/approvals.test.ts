import { existsSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client'
import { eq } from 'drizzle-orm'
import type { Hono } from 'hono'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../../../examples/demo/src/auth.ts'
import type { DemoContext } from '../../../examples/demo/src/context.ts'
import { posts, users } from '../../../examples/demo/src/schema.ts'
import { createAuditLog } from '../../../src/db/index.ts'
import { hiddenInput, signIn } from '../../demo/support.ts'
import { skipBrowser } from '../../scaffold/support/consent.ts'
import { demoAccessToken } from '../../support/demo-oauth.ts'
import { type DemoServer, startDemoServer } from '../../support/demo-server.ts'
import { call } from '../support/client.ts'

const EMAIL = 'demo@example.com'
const PASSWORD = 'correct horse battery'
const OTHER_EMAIL = 'other-approver@example.com'
const OTHER_PASSWORD = 'another horse battery'

type Era = { pin: '2026-07-28' } | 'legacy'
const ERAS: readonly Era[] = [{ pin: '2026-07-28' }, 'legacy']
const eraName = (era: Era) => (era === 'legacy' ? '2025-11-25' : '2026-07-28')

interface ApprovalLink {
  status: string
  approval_id: string
  approval_url: string
}

/**
 * Approval of destructive writes on the demo's /mcp, over HTTP with OAuth: a client that can
 * ask the user (elicitation) approves or declines a crud_delete in both protocol eras where
 * the transport lets it ask; a client that cannot gets a link, the author approves it in
 * Chromium, and the retry with the approval's id deletes that one post, once.
 */
describe.skipIf(skipBrowser)('approvals of crud_delete on the demo /mcp', () => {
  let ctx: DemoContext
  let app: Hono
  let demo: DemoServer | undefined
  let origin: string
  let browser: Browser
  let token: string
  let authorId: number
  let otherId: number

  beforeAll(async () => {
    demo = await startDemoServer({
      MCP_TOKEN_SECRET: 'demo-approvals-test-secret-0123456789-ab',
      DEMO_EMAIL: EMAIL,
      DEMO_PASSWORD: PASSWORD,
    })
    ;({ origin, ctx, app, browser } = demo)
    const [author] = await ctx.database.db
      .select({ id: users.id })
      .from(users)
      .where(eq(users.email, EMAIL))
    authorId = author!.id
    const [other] = await ctx.database.db
      .insert(users)
      .values({
        email: OTHER_EMAIL,
        name: 'Other',
        passwordHash: await hashPassword(OTHER_PASSWORD),
      })
      .returning()
    otherId = other!.id
    // The author's assistant: registered, consented and holding a token, as an MCP client.
    token = await demoAccessToken(app, origin, EMAIL, PASSWORD)
  }, 120_000)

  afterAll(async () => demo?.close())

  /**
   * The author's assistant in `era`. With `onUrl` it declares URL-mode elicitation: each
   * approval request opens the page (`onUrl` plays the person there) and then accepts.
   */
  async function connect(era: Era, onUrl?: (url: string) => Promise<void>): Promise<ClientV2> {
    const client = new ClientV2(
      { name: 'approvals-test', version: '1.0.0' },
      {
        versionNegotiation: { mode: era },
        ...(onUrl ? { capabilities: { elicitation: { url: {} } } } : {}),
      },
    )
    if (onUrl) {
      client.setRequestHandler('elicitation/create', async (request) => {
        const params = request.params as { message?: string; url?: string; mode?: string }
        asked.push(String(params.message))
        expect(params.mode).toBe('url')
        await onUrl(String(params.url))
        return { action: 'accept' }
      })
    }
    await client.connect(
      new StreamableHTTPClientTransportV2(new URL(`${origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    expect(client.getProtocolEra()).toBe(era === 'legacy' ? 'legacy' : 'modern')
    return client
  }
  const asked: string[] = []

  async function newPost(title: string, author = authorId): Promise<number> {
    const [post] = await ctx.database.db
      .insert(posts)
      .values({ title, body: 'b', authorId: author })
      .returning()
    return post!.id
  }
  async function exists(id: number): Promise<boolean> {
    const rows = await ctx.database.db.select().from(posts).where(eq(posts.id, id))
    return rows.length === 1
  }

  /**
   * The author, in Chromium: opens the link, signs in, reads the page and presses the button
   * (by keyboard: focus and Enter). Returns the page's text; `screenshot` saves the page first.
   */
  async function decideInBrowser(
    url: string,
    button: 'Approve' | 'Deny',
    screenshot?: string,
  ): Promise<string> {
    const context = await browser.newContext()
    const page = await context.newPage()
    try {
      await page.goto(url)
      expect(new URL(page.url()).pathname).toBe('/login')
      await page.getByLabel('Email').fill(EMAIL)
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
      await page.getByRole('button', { name: button }).waitFor()
      const shown = (await page.textContent('main')) ?? ''
      if (screenshot) {
        mkdirSync(dirname(screenshot), { recursive: true })
        await page.screenshot({ path: screenshot, fullPage: true })
        console.log(`approval page screenshot: ${screenshot}`)
      }
      // Both choices are buttons of one labelled form, reachable by keyboard.
      expect(await page.getByRole('form', { name: 'Decide on this change' }).count()).toBe(1)
      await page.getByRole('button', { name: button }).focus()
      await page.keyboard.press('Enter')
      await page.locator('#decision').waitFor()
      return shown
    } finally {
      await context.close()
    }
  }

  it('lists crud_delete with an approval_id argument', async () => {
    const client = await connect({ pin: '2026-07-28' })
    try {
      const { tools } = await client.listTools()
      const remove = tools.find((tool) => tool.name === 'crud_delete')
      expect(remove?.inputSchema.required).toEqual(['model', 'id'])
      expect(Object.keys(remove?.inputSchema.properties ?? {})).toContain('approval_id')
    } finally {
      await client.close()
    }
  })

  // The same exchange in both eras: the client is sent to the page through the protocol
  // (2026-07-28 input_required, 2025-11-25 elicitation/create with mode "url" over the stateless
  // endpoint) and its call waits there until the author decides in the browser.
  for (const era of ERAS) {
    it(`${eraName(era)}: URL mode: the author sees the record and the assistant, approves (deleted once) or denies (kept)`, async () => {
      const shown: string[] = []
      const screenshot = join(tmpdir(), 'kiln-test-output', `approval-page-${eraName(era)}.png`)
      const approving = await connect(era, async (url) => {
        shown.push(await decideInBrowser(url, 'Approve', screenshot))
      })
      const denying = await connect(era, async (url) => {
        shown.push(await decideInBrowser(url, 'Deny'))
      })
      try {
        const kept = await newPost('Asked, denied')
        const gone = await newPost('Asked, approved')
        asked.length = 0
        const denied = await call(denying, 'crud_delete', { model: 'posts', id: kept })
        expect(denied.isError).toBe(true)
        expect(denied.text).toBe(
          `The user declined: Delete posts record ${kept}. Nothing was changed.`,
        )
        expect(await exists(kept)).toBe(true)

        const approved = await call(approving, 'crud_delete', { model: 'posts', id: gone })
        expect(approved).toMatchObject({ isError: false, json: { message: 'Deleted', id: gone } })
        expect(await exists(gone)).toBe(false)
        expect(await exists(kept)).toBe(true)
        expect(asked).toEqual(
          [kept, gone].map(
            (id) => `Delete posts record ${id}: review and approve it on the approval page.`,
          ),
        )
        // The page showed the record as the author may read it, and the assistant's name.
        expect(shown[1]).toContain(`Delete posts record ${gone}`)
        expect(shown[1]).toContain('Asked, approved')
        expect(shown[1]).toContain('kiln MCP test client')
        expect(shown[1]).toMatch(/expires in (9|10) minutes/)
        expect(shown[0]).toContain('Asked, denied')
        expect(existsSync(screenshot)).toBe(true)

        // The approved call ran once, after waiting; the denied one ran not at all.
        const outcomes = async () =>
          (await createAuditLog(ctx.database).list({ tool: 'crud_delete', limit: 1000 }))
            .filter((entry) => [kept, gone].includes(Number(entry.recordIds[0])))
            .reverse()
            .map((entry) => [entry.recordIds[0], entry.outcome])
        await expect.poll(outcomes, { timeout: 10_000 }).toEqual([
          [kept, 'awaiting_approval'],
          [kept, 'denied'],
          [gone, 'awaiting_approval'],
          [gone, 'approved'],
          [gone, 'ok'],
        ])
      } finally {
        await approving.close()
        await denying.close()
      }
    }, 90_000)
  }

  it('2026-07-28: a client answering its own request, forging or replaying an answer, changes nothing', async () => {
    const id = await newPost('Forged answer')
    const body = (extra: Record<string, unknown>) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'crud_delete',
          arguments: { model: 'posts', id },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'curl', version: '1' },
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {}, url: {} } },
          },
          ...extra,
        },
      })
    const post = (extra: Record<string, unknown>) =>
      fetch(`${origin}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'crud_delete',
        },
        body: body(extra),
      }).then((response) => response.json() as Promise<{ result?: Record<string, unknown> }>)
    const approve = { approval: { action: 'accept', content: { approve: true } } }
    const forged = await post({ inputResponses: approve, requestState: 'x'.repeat(43) })
    expect(forged.result).toMatchObject({ isError: true })
    expect(await exists(id)).toBe(true)
    const first = await post({})
    expect(first.result).toMatchObject({ resultType: 'input_required' })
    const requestState = first.result!.requestState as string
    // The client approving its own request, with the request's state: nothing is deleted.
    const self = await post({ inputResponses: approve, requestState })
    expect(self.result).toMatchObject({ isError: true })
    expect(await exists(id)).toBe(true)
    // The answer to this question, sent with another post's id, is refused.
    const other = await newPost('Not asked about')
    const swapped = JSON.parse(body({ inputResponses: approve, requestState }))
    swapped.params.arguments.id = other
    const moved = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'crud_delete',
      },
      body: JSON.stringify(swapped),
    }).then((response) => response.json() as Promise<{ result?: Record<string, unknown> }>)
    expect(moved.result).toMatchObject({ isError: true })
    expect(await exists(other)).toBe(true)
    // Replayed, it is refused again: only the page approves.
    const replayed = await post({ inputResponses: approve, requestState })
    expect(replayed.result).toMatchObject({ isError: true })
    expect(await exists(id)).toBe(true)
  })

  for (const era of ERAS) {
    it(`${eraName(era)}: a client that cannot ask gets a link; the author approves in Chromium; the retry deletes once`, async () => {
      const client = await connect(era)
      try {
        const five = await newPost('Post five')
        const six = await newPost('Post six')
        const first = await client.callTool({
          name: 'crud_delete',
          arguments: { model: 'posts', id: five },
        })
        expect(first.isError).not.toBe(true)
        const link = first.structuredContent as unknown as ApprovalLink
        expect(link.status).toBe('approval_required')
        expect(link.approval_url).toBe(`${origin}/approvals/${link.approval_id}`)
        const text = (first.content as Array<{ text: string }>)[0]!.text
        expect(text).toContain(link.approval_url)
        expect(text).toContain(link.approval_id)
        expect(await exists(five)).toBe(true)

        // Before the author decides, the retry waits and deletes nothing.
        const early = await call(client, 'crud_delete', {
          model: 'posts',
          id: five,
          approval_id: link.approval_id,
        })
        expect(early.isError).toBe(false)
        expect(early.text).toMatch(/^The user has not approved it yet\./)
        expect(await exists(five)).toBe(true)

        // Another signed-in user neither sees it nor can approve it.
        const other = await signIn(app, OTHER_EMAIL, OTHER_PASSWORD)
        const path = new URL(link.approval_url).pathname
        const peek = await app.request(path, { headers: { cookie: other.header() } })
        expect(peek.status).toBe(404)
        expect(await peek.text()).not.toContain('Post five')
        // Their own session's CSRF token: the form is theirs, the approval is not.
        const otherSession = await ctx.sessions.current(
          new Request(origin, { headers: { cookie: other.header() } }),
        )
        const otherCsrf = otherSession!.csrfToken
        const forced = await app.request(path, {
          method: 'POST',
          headers: {
            cookie: other.header(),
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ csrf_token: otherCsrf, decision: 'approve' }).toString(),
        })
        expect(forced.status).toBe(404)
        const still = await call(client, 'crud_delete', {
          model: 'posts',
          id: five,
          approval_id: link.approval_id,
        })
        expect(still.text).toMatch(/^The user has not approved it yet\./)

        const shown = await decideInBrowser(link.approval_url, 'Approve')
        expect(shown).toContain(`Delete posts record ${five}`)
        expect(shown).toContain('crud_delete')

        // The approval for five does not delete six.
        const moved = await call(client, 'crud_delete', {
          model: 'posts',
          id: six,
          approval_id: link.approval_id,
        })
        expect(moved.isError).toBe(true)
        expect(moved.text).toMatch(/is for another call/)
        expect(await exists(six)).toBe(true)

        const retry = await call(client, 'crud_delete', {
          model: 'posts',
          id: five,
          approval_id: link.approval_id,
        })
        expect(retry).toMatchObject({ isError: false, json: { message: 'Deleted', id: five } })
        expect(await exists(five)).toBe(false)
        expect(await exists(six)).toBe(true)

        const again = await call(client, 'crud_delete', {
          model: 'posts',
          id: five,
          approval_id: link.approval_id,
        })
        expect(again.isError).toBe(true)
        expect(again.text).toMatch(/expired, was already used, or is not yours/)

        // Every call is in the audit trail with its outcome (written within a second).
        const outcomes = async () =>
          (await createAuditLog(ctx.database).list({ tool: 'crud_delete', limit: 1000 }))
            .filter((entry) => [five, six].includes(Number(entry.recordIds[0])))
            .reverse()
            .map((entry) => [entry.recordIds[0], entry.outcome])
        await expect.poll(outcomes, { timeout: 10_000 }).toEqual([
          [five, 'awaiting_approval'],
          [five, 'awaiting_approval'],
          [five, 'awaiting_approval'],
          // The person's approval, recorded when given on the page.
          [five, 'approved'],
          [six, 'refused'],
          [five, 'ok'],
          [five, 'refused'],
        ])
      } finally {
        await client.close()
      }
    }, 90_000)
  }

  it('a denied approval is a tool error that changes nothing, and is used up', async () => {
    const client = await connect({ pin: '2026-07-28' })
    try {
      const id = await newPost('Denied')
      const first = await client.callTool({
        name: 'crud_delete',
        arguments: { model: 'posts', id },
      })
      const link = first.structuredContent as unknown as ApprovalLink
      await decideInBrowser(link.approval_url, 'Deny')
      const retry = await call(client, 'crud_delete', {
        model: 'posts',
        id,
        approval_id: link.approval_id,
      })
      expect(retry).toMatchObject({
        isError: true,
        text: `The user declined: Delete posts record ${id}. Nothing was changed.`,
      })
      expect(await exists(id)).toBe(true)
      const again = await call(client, 'crud_delete', {
        model: 'posts',
        id,
        approval_id: link.approval_id,
      })
      expect(again.text).toMatch(/expired, was already used, or is not yours/)
    } finally {
      await client.close()
    }
  }, 60_000)

  it("asks no one about another author's post: refused at once", async () => {
    const client = await connect({ pin: '2026-07-28' })
    try {
      const theirs = await newPost('Theirs', otherId)
      const outcome = await call(client, 'crud_delete', { model: 'posts', id: theirs })
      expect(outcome).toMatchObject({ isError: true, text: 'Not allowed: crud_delete on posts' })
      expect(await exists(theirs)).toBe(true)
    } finally {
      await client.close()
    }
  })

  it('the approval form is refused from another origin and without the session CSRF token', async () => {
    const client = await connect({ pin: '2026-07-28' })
    try {
      const id = await newPost('Protected form')
      const first = await client.callTool({
        name: 'crud_delete',
        arguments: { model: 'posts', id },
      })
      const path = new URL((first.structuredContent as unknown as ApprovalLink).approval_url)
        .pathname
      const jar = await signIn(app, EMAIL, PASSWORD)
      const page = await app.request(path, { headers: { cookie: jar.header() } })
      expect(page.status).toBe(200)
      expect(page.headers.get('x-frame-options')).toBe('DENY')
      expect(page.headers.get('cache-control')).toContain('no-store')
      const csrf = hiddenInput(await page.text(), 'csrf_token')
      const post = (headers: Record<string, string>, token: string) =>
        app.request(path, {
          method: 'POST',
          headers: {
            cookie: jar.header(),
            'content-type': 'application/x-www-form-urlencoded',
            ...headers,
          },
          body: new URLSearchParams({ csrf_token: token, decision: 'approve' }).toString(),
        })
      expect((await post({ origin: 'https://evil.example' }, csrf)).status).toBe(403)
      expect((await post({}, 'wrong')).status).toBe(403)
      const anonymous = await app.request(path)
      expect(anonymous.status).toBe(302)
      expect(anonymous.headers.get('location')).toBe(`/login?return_to=${encodeURIComponent(path)}`)
      expect((await post({ origin }, csrf)).status).toBe(200)
      expect((await post({ origin }, csrf)).status).toBe(409)
    } finally {
      await client.close()
    }
  })
})
