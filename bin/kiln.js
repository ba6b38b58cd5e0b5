#!/usr/bin/env node
// The kiln command. In a checkout (src/ present) it runs the TypeScript sources through tsx;
// an installed package runs the compiled dist/.
import { existsSync } from 'node:fs'

try {
  const source = new URL('../src/cli/main.ts', import.meta.url)
  if (existsSync(source)) {
    const { register } = await import('tsx/esm/api')
    register()
    await import(source.href)
  } else {
    await import(new URL('../dist/cli/main.js', import.meta.url).href)
  }
} catch (error) {
  // A peer outside its supported range (zod 3 beside kiln): its message says what to install.
  if (error instanceof Error && error.name === 'PeerVersionError') {
    console.error(error.message)
    process.exit(1)
  }
  throw error
}
