import type { CallToolResult, InputRequiredResult } from '@modelcontextprotocol/server'
import { inputRequired } from '@modelcontextprotocol/server'
import type { ChangeDescription } from './change.ts'
import { describeChange } from './change.ts'
import type { Approval } from './store.ts'

/** The argument a retry names its approval with (link flow). */
export const APPROVAL_ID_ARGUMENT = 'approval_id'
/** The key of the approval request in a multi-round-trip `inputRequests` map. */
export const APPROVAL_INPUT_KEY = 'approval'

/** The form question of a call the app lets the client confirm. */
export function formQuestion(change: ChangeDescription, requestState: string): InputRequiredResult {
  return inputRequired({
    inputRequests: {
      [APPROVAL_INPUT_KEY]: inputRequired.elicit({
        message:
          `${change.summary}\n${change.fields.map(([name, value]) => `${name}: ${value}`).join('\n')}`.trim(),
        requestedSchema: {
          type: 'object',
          properties: {
            approve: {
              type: 'boolean',
              title: 'Approve',
              description: `Allow the assistant to ${change.summary.toLowerCase()}`,
              default: false,
            },
          },
          required: ['approve'],
        },
      }),
    },
    requestState,
  })
}

/** The tool result of the link flow: not an error, and nothing done yet. */
export function approvalLink(
  approval: Approval,
  pageUrl: (id: string) => string,
  prefix = '',
): CallToolResult {
  const url = pageUrl(approval.id)
  const summary = describeChange(approval).summary
  const expiresAt = new Date(approval.expiresAt).toISOString()
  const text =
    `${prefix}Not done yet: ${summary} needs the user's approval. Ask the user to open ${url} ` +
    `(signed in), review and approve it; then call ${approval.tool} again with the same ` +
    `arguments and "${APPROVAL_ID_ARGUMENT}": "${approval.id}". The approval expires at ${expiresAt}.`
  return {
    content: [{ type: 'text', text }],
    structuredContent: {
      status: 'approval_required',
      approval_id: approval.id,
      approval_url: url,
      expires_at: expiresAt,
    },
  }
}
