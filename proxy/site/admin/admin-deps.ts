/** What the admin API needs: the operator services (database, live store, key cache, catalog), the settings and a clock. */
import type { OperatorDeps } from '../../accounts/operator-deps.ts'
import type { Config } from '../../config/config.ts'
import type { Mailer } from '../../people/mailer.ts'

export type AdminDeps = OperatorDeps & { config: Config; mailer: Mailer }
