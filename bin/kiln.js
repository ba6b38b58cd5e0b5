#!/usr/bin/env node
// The kiln command. In a checkout (src/ present) it runs the TypeScript sources through tsx;
// an installed package runs the compiled dist/.
import { existsSync } from 'node:fs'

const source = new URL('../src/cli/main.ts', import.meta.url)
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api')
  register()
  await import(source.href)
} else {
  await import(new URL('../dist/cli/main.js', import.meta.url).href)
}
