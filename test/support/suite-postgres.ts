// The PostgreSQL server of test/run.mjs's second pass: started once, its maintenance URL printed as
// one line, stopped when run.mjs closes this process's stdin (or dies). Each test file of the pass
// takes fresh databases from it through the harness (BULWARK_TEST_POSTGRES).
import { startPostgres } from './postgres.ts'

const server = await startPostgres({ settings: { max_connections: '400' } })
process.stdout.write(`${server.url()}\n`)
const stop = () => {
  void server.stop().then(() => process.exit(0))
}
process.stdin.on('end', stop)
process.stdin.on('close', stop)
process.stdin.resume()
process.on('SIGTERM', stop)
