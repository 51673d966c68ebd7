// Every route file registers itself on import; this list is the whole API.
import './system/health.ts'
import './http/openapi.ts'
import './auth/routes.ts'
import './models/routes.ts'
import './tenants/routes.ts'
import './signals/routes.ts'
import './trading/routes.ts'
import './risk/routes.ts'
