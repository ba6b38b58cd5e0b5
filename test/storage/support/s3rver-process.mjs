// Runs s3rver in its own process (so its memory is not the test's) and prints its port.
import S3rver from 's3rver'

const [directory, bucket] = process.argv.slice(2)
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  allowMismatchedSignatures: true,
  configureBuckets: [{ name: bucket, configs: [] }],
})
const address = await server.run()
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`)
process.on('SIGTERM', async () => {
  await server.close()
  process.exit(0)
})
