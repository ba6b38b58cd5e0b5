/** A failure the caller can fix; its message is returned as the tool error. */
export class ToolError extends Error {}
