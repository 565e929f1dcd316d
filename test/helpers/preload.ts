// Loaded before every test file (bunfig.toml): tests keep the log quiet unless LOG_LEVEL says otherwise.
import { setLogLevel, type LogLevel } from '../../proxy/log/log.ts'

setLogLevel((process.env.TEST_LOG_LEVEL as LogLevel | undefined) ?? 'error')
