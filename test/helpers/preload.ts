// Loaded before every test file (bunfig.toml). Suites that start servers and databases need more than
// the 5 s default (hooks take theirs from `bun test --timeout`, set in package.json); the log stays quiet unless TEST_LOG_LEVEL says otherwise.
import { setDefaultTimeout } from 'bun:test'
import { setLogLevel, type LogLevel } from '../../proxy/core/log.ts'

setDefaultTimeout(60_000)
setLogLevel((process.env.TEST_LOG_LEVEL as LogLevel | undefined) ?? 'error')
